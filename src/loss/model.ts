/**
 * The discrete-event model of one pod termination (docs/simulate.md): one LB in front of `pods`
 * pods, one of which leaves in a given order while traffic arrives. Pure: time is a number, the
 * randomness a keyed generator; nothing here touches a clock, a socket or a file.
 *
 * Only the leaving pod is followed request by request: a request the LB gives another pod is served.
 */
import { meanMs, sampleDuration, type DurationDist } from './duration-dist';
import { podScript, type TerminationOrder } from './orders';
import type { PodControl, PodInputs } from './pod-control';

/** Why a request sent to the leaving pod did not simply succeed there. All but `redispatched` are lost. */
export const FATES = ['redispatched', 'refused', 'cutAtDown', 'cutAtExit', 'keepAliveRace'] as const;
export type Fate = (typeof FATES)[number];
export const LOSSES: readonly Fate[] = ['refused', 'cutAtDown', 'cutAtExit', 'keepAliveRace'];

/** The LB as the model needs it (src/simulate/lb-inputs.ts derives it from the plan). */
export type LbInputs = {
  /** Probe period; the first probe after a change comes within one period (random phase per run). */
  probeIntervalMs: number;
  /** From the first failing probe to DOWN: (fall - 1) x fastinter for HAProxy, 0 when one failure ejects. */
  downAfterFirstFailMs: number;
  /** The health endpoint's soft answer puts the pod in a "no new sessions" state at the first probe that sees it. */
  softSignal: boolean;
  /** DOWN kills the pod's live sessions (and the connects under way). */
  flushOnDown: boolean;
  /** New requests still reach the pod this long after DOWN (NLB's propagation; 0 elsewhere). */
  propagationMs: number;
  /** A refused connect is re-sent to another pod. */
  redispatch: boolean;
  /** Without redispatch: how long a refused request holds its client before it fails (HAProxy's retries on the same pod). */
  refusedHoldMs: number;
  /** A request that got no answer on a connection the pod closed is sent again (HAProxy retry-on empty-response). */
  retryOnEmptyResponse: boolean;
  /**
   * The LB keeps its connections to the pod and reuses them (no http-server-close): a request goes
   * over an idle one with no connect, and at a listener close each idle connection carries one more
   * request (Envoy closes it with that response).
   */
  reusesConnections: boolean;
  /** LB to pod connect time: also the window in which a connect still in the listen backlog meets a listener close. */
  connectMs: number;
};

export type { PodControl, PodInputs };

export type Traffic =
  /** Open loop: Poisson arrivals at the LB. */
  | { kind: 'poisson'; rps: number }
  /** Closed loop: each worker sends its next request when the last one ended (the harness's load generator). */
  | { kind: 'workers'; workers: number };

export type RunInputs = {
  pods: number;
  lb: LbInputs;
  pod: PodInputs;
  order: TerminationOrder;
  traffic: Traffic;
  durations: DurationDist;
  /** Requests started on the leaving pod on purpose (the harness's long request or stream), ms from the sequence start. */
  singles?: Array<{ atMs: number; ms: number }>;
  /** The sequence starts this long (uniform in [min, max] ms) after the moment `singles` count from: they move earlier by it. */
  singlesLeadMs?: { min: number; max: number };
  /** Traffic starts this long before the sequence, so the pod is busy as in steady state. */
  warmupMs: number;
  /** Idle connections the LB holds to the pod at a listener close, where it reuses them (idleConnectionsAtClose). */
  idleAtClose: number;
};

/**
 * The idle connections an LB that reuses them holds to the pod at the instant the pod closes its
 * listeners: taken as the mean number of requests in flight at the pod (the LB opens a connection
 * only when none is idle, so it holds at least that many, and the ones busy a moment ago are idle
 * now). An assumption, not a measurement: docs/simulate.md says so.
 */
export function idleConnectionsAtClose(traffic: Traffic, durations: DurationDist, pods: number, connectMs: number): number {
  return Math.max(1, Math.round(perPodRatePerMs(traffic, pods, meanMs(durations), connectMs) * meanMs(durations)));
}

/**
 * Requests per ms the LB gives one pod: open-loop arrivals spread over the pods, or closed-loop
 * clients each sending its next request when the last ended (a request and a connect apart).
 */
export function perPodRatePerMs(traffic: Traffic, pods: number, meanRequestMs: number, connectMs: number): number {
  return traffic.kind === 'poisson' ? traffic.rps / pods / 1000 : traffic.workers / pods / Math.max(1, meanRequestMs + connectMs);
}

export type RunOutcome = {
  /** Requests the LB gave the leaving pod, and what became of those that did not succeed there. */
  toPod: number;
  fates: Record<Fate, number>;
  lost: number;
  /** The run's instants (ms from the sequence start), for tests and explanations. */
  at: { drain: number | null; zero: number | null; down: number | null; exit: number | null };
};

type Req = { durMs: number; worker: number | null; viaPool: boolean; acceptedAt: number | null; resolved: boolean };
type Ev = { t: number; seq: number; fn: () => void };

/** A binary min-heap on (t, seq): events at the same instant run in the order they were scheduled. */
class Agenda {
  private heap: Ev[] = [];
  private seq = 0;
  now = -Infinity;

  at(t: number, fn: () => void): void {
    const ev = { t, seq: this.seq++, fn };
    const h = this.heap;
    h.push(ev);
    for (let i = h.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (!before(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  run(): void {
    const h = this.heap;
    while (h.length > 0) {
      const top = h[0]!;
      const last = h.pop()!;
      if (h.length > 0) {
        h[0] = last;
        for (let i = 0; ; ) {
          const l = 2 * i + 1;
          const r = l + 1;
          let m = i;
          if (l < h.length && before(h[l]!, h[m]!)) m = l;
          if (r < h.length && before(h[r]!, h[m]!)) m = r;
          if (m === i) break;
          [h[i], h[m]] = [h[m]!, h[i]!];
          i = m;
        }
      }
      this.now = top.t;
      top.fn();
    }
  }
}

const before = (a: Ev, b: Ev): boolean => a.t < b.t || (a.t === b.t && a.seq < b.seq);

/** One run: the leaving pod's sequence starts at 0; returns the fate of every request the LB gave it. */
export function simulateRun(inp: RunInputs, rand: () => number): RunOutcome {
  const { lb } = inp;
  const agenda = new Agenda();
  const fates: Record<Fate, number> = { redispatched: 0, refused: 0, cutAtDown: 0, cutAtExit: 0, keepAliveRace: 0 };
  const at: RunOutcome['at'] = { drain: null, zero: null, down: null, exit: null };
  const inflight = new Set<Req>();
  const connecting = new Set<Req>();
  let toPod = 0;
  let listenersOpen = true;
  let alive = true;
  let lbSends = true;
  let lbState: 'up' | 'nolb' | 'down' = 'up';
  let downScheduled = false;
  // With reuse, before any listener close or flush a request goes over an idle connection (`warm`);
  // a flush resets them; a listener close leaves `idleAtClose` of them, each good for one request.
  let pool: 'warm' | number = lb.reusesConnections ? 'warm' : 0;
  let stopAt = Infinity;
  const phase = rand() * lb.probeIntervalMs;
  const nextProbe = (t: number): number => phase + Math.floor((t - phase) / lb.probeIntervalMs + 1) * lb.probeIntervalMs;

  /** A worker's next request goes out when its last one ended, however it ended. */
  const ended = (req: Req, t: number): void => {
    if (req.worker !== null) agenda.at(t, () => send(req.worker));
  };
  const resolve = (req: Req, fate: Fate | 'served', t: number): void => {
    req.resolved = true;
    inflight.delete(req);
    connecting.delete(req);
    if (fate !== 'served') fates[fate]++;
    // Re-sent elsewhere (a refused connect, or an empty response retried): it runs its full length on another pod.
    ended(req, fate === 'redispatched' ? t + lb.connectMs + req.durMs : t);
  };

  const arrive = (req: Req): void => {
    const t = agenda.now;
    connecting.delete(req);
    if (req.resolved) return;
    // A pooled connection carries one more request after the drain (Envoy closes it with that response).
    if (alive && (listenersOpen || req.viaPool)) {
      req.acceptedAt = t;
      inflight.add(req);
      agenda.at(t + req.durMs, () => done(req));
      return;
    }
    if (lb.redispatch) return resolve(req, 'redispatched', t);
    // The LB tries the same pod again and again, then answers an error itself (HAProxy: 503).
    req.resolved = true;
    fates.refused++;
    ended(req, t + lb.refusedHoldMs);
  };

  const done = (req: Req): void => {
    if (req.resolved) return;
    resolve(req, 'served', agenda.now);
  };

  /** The LB gives a request to the leaving pod at `now`. */
  const dispatch = (durMs: number, worker: number | null): void => {
    toPod++;
    const viaPool = pool === 'warm' || pool > 0;
    if (typeof pool === 'number' && pool > 0) pool--;
    const req: Req = { durMs, worker, viaPool, acceptedAt: null, resolved: false };
    connecting.add(req);
    agenda.at(agenda.now + (viaPool ? 0 : lb.connectMs), () => arrive(req));
  };

  /** One request from the load. Poisson is thinned to the leaving pod's share; workers pick a pod each time. */
  const send = (worker: number | null): void => {
    const t = agenda.now;
    if (t >= stopAt) return;
    const durMs = sampleDuration(inp.durations, rand);
    const eligible = inp.pods - 1 + (lbSends ? 1 : 0);
    if (lbSends && Math.floor(rand() * eligible) === 0) dispatch(durMs, worker);
    else if (worker !== null) agenda.at(t + lb.connectMs + durMs, () => send(worker));
  };

  const down = (): void => {
    const t = agenda.now;
    lbState = 'down';
    at.down = t;
    if (lb.flushOnDown) {
      for (const req of [...inflight, ...connecting]) resolve(req, 'cutAtDown', t);
      pool = 0;
    }
    agenda.at(t + lb.propagationMs, () => {
      lbSends = false;
      stopWhenNothingReachesThePod();
    });
  };

  /** Once the LB sends the pod nothing and the pod is gone, later traffic changes no count: stop it. */
  const stopWhenNothingReachesThePod = (): void => {
    if (!lbSends && !alive) stopAt = Math.min(stopAt, agenda.now + 1);
  };

  const control: PodControl = {
    inputs: inp.pod,
    after: (ms, fn) => agenda.at(agenda.now + ms, fn),
    health(answer) {
      const t = agenda.now;
      if (answer === 'soft' && lb.softSignal) {
        agenda.at(nextProbe(t), () => {
          if (lbState !== 'up') return;
          lbState = 'nolb';
          lbSends = false;
          stopWhenNothingReachesThePod();
        });
        return;
      }
      // A soft answer the LB does not understand is a failure like any other.
      if (downScheduled) return;
      downScheduled = true;
      agenda.at(nextProbe(t) + lb.downAfterFirstFailMs, down);
    },
    drain(listeners) {
      const t = agenda.now;
      at.drain = t;
      if (listeners === 'keep') return;
      listenersOpen = false;
      if (pool === 'warm') pool = inp.idleAtClose;
      // A connect the kernel completed but the proxy had not yet accepted is reset with the listener.
      for (const req of inflight) {
        if (req.viaPool || req.acceptedAt === null || req.acceptedAt <= t - lb.connectMs) continue;
        resolve(req, lb.retryOnEmptyResponse ? 'redispatched' : 'keepAliveRace', t);
      }
    },
    waitZero(then) {
      const start = agenda.now;
      const poll = (): void => {
        const t = agenda.now;
        if (inflight.size === 0 || t >= start + inp.pod.drainTimeoutMs) {
          at.zero = t;
          then();
        } else agenda.at(Math.min(t + inp.pod.pollIntervalMs, start + inp.pod.drainTimeoutMs), poll);
      };
      poll();
    },
    exit() {
      const t = agenda.now;
      at.exit = t;
      alive = false;
      listenersOpen = false;
      pool = 0;
      for (const req of inflight) resolve(req, 'cutAtExit', t);
      stopWhenNothingReachesThePod();
    },
  };

  const start = -inp.warmupMs;
  if (inp.traffic.kind === 'workers') {
    const workers = inp.traffic.workers;
    for (let w = 0; w < workers; w++) agenda.at(start + rand() * 100, () => send(w));
  } else {
    // Poisson thinned to the leaving pod: rps / pods while the LB still sends to it.
    const rate = perPodRatePerMs(inp.traffic, inp.pods, meanMs(inp.durations), inp.lb.connectMs);
    const arrival = (): void => {
      if (agenda.now >= stopAt) return;
      if (lbSends) dispatch(sampleDuration(inp.durations, rand), null);
      agenda.at(agenda.now - Math.log(1 - rand()) / rate, arrival);
    };
    agenda.at(start - Math.log(1 - rand()) / rate, arrival);
  }
  const lead = inp.singlesLeadMs ? inp.singlesLeadMs.min + rand() * (inp.singlesLeadMs.max - inp.singlesLeadMs.min) : 0;
  for (const s of inp.singles ?? []) agenda.at(s.atMs - lead, () => dispatch(s.ms, null));
  agenda.at(0, () => podScript(inp.order, control));
  agenda.run();
  const lost = LOSSES.reduce((n, f) => n + fates[f], 0);
  return { toPod, fates, lost, at };
}
