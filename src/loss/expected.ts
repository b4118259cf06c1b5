/**
 * The loss model of src/loss/model.ts in closed form: the expected requests one pod termination
 * loses, by fate, for gracegate's three sequences under Poisson traffic. The simulation follows
 * every request of many runs; this integrates the same mechanics over the few random quantities
 * that set the run's instants (the probe phase at the health flip and at the later one, the moment
 * in-flight reaches zero), so the planner can rank the orders in microseconds (`gracegate plan`
 * stays within twice the CPU of `node -e 0`, bench/startup-bench.ts). test/loss/expected.test.ts
 * holds the two to each other.
 *
 * How the count works: Poisson arrivals at rate λ (per ms) to the pod; a request that arrived at a
 * and took a connect of c is still running at instant X with probability P(D > X - a - c); summed
 * over the arrivals of a window (lo, hi) that is λ (excess(X - hi - c) - excess(X - lo - c)), with
 * excess(x) = E[(D - x)^+] (src/loss/duration-dist.ts). The one approximation: the moment in-flight
 * reaches zero is taken as the first poll after the last request in flight at the listener close
 * ends (requests an idle connection still carries after the close are counted among them), and
 * the idle connections are taken up by the arrivals' mean count; the simulation follows them one by
 * one. test/loss/expected.test.ts bounds the difference.
 */
import type { Sequence } from '../contract/hc';
import { excessFunction, normalCdf, type DurationDist } from './duration-dist';
import type { Fate, LbInputs } from './model';
import type { PodInputs } from './pod-control';

/** What the closed form needs: the simulation's inputs, with Poisson traffic. */
export type ExpectedInputs = {
  pods: number;
  lb: LbInputs;
  pod: PodInputs;
  order: Sequence;
  rps: number;
  durations: DurationDist;
  idleAtClose: number;
};

export type ExpectedLoss = {
  byFate: Record<Fate, number>;
  lost: number;
  /**
   * Of `lost`, the requests still running a drain timeout after the drain began: cut whatever the
   * order (only a longer drain timeout saves them). The rest is what the order itself costs.
   */
  beyondDrainTimeout: number;
};

/** Points of the midpoint rule over one probe period (the phase is uniform over it). */
const PHASE_POINTS = 8;

/** The midpoints of (0, period]: the first probe after an instant falls uniformly in it. */
function phases(periodMs: number): number[] {
  if (periodMs <= 0) return [0];
  return Array.from({ length: PHASE_POINTS }, (_, k) => ((k + 0.5) * periodMs) / PHASE_POINTS);
}

const mean = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;

/** E[min(N, cap)] for N Poisson with mean m: the requests a pool of `cap` idle connections carries. */
export function expectedCapped(m: number, cap: number): number {
  if (cap <= 0 || m <= 0) return 0;
  if (m > 100) {
    // A Poisson of a large mean is normal to within a fraction of a request: E[min(X, c)] = m - E[(X - c)^+].
    const sd = Math.sqrt(m);
    const z = (cap - m) / sd;
    const density = Math.exp(-(z * z) / 2) / Math.sqrt(2 * Math.PI);
    return m - (sd * density - (cap - m) * (1 - normalCdf(z)));
  }
  // sum over k < cap of P(N > k), with P(N <= k) built up from the pmf in log space.
  let logPmf = -m;
  let cdf = 0;
  let sum = 0;
  for (let k = 0; k < cap; k++) {
    cdf += Math.exp(logPmf);
    sum += Math.max(0, 1 - cdf);
    logPmf += Math.log(m) - Math.log(k + 1);
    if (1 - cdf < 1e-12) break;
  }
  return sum;
}

/** Polls beyond this many are summed over even segments instead (the sum is smooth by then). */
const POLL_STEPS = 40;

/**
 * E[Z]: the mean time from the listener close to the poll that first sees nothing in flight, at
 * most the drain timeout, where `stillRunning(t)` is the expected number of requests still running
 * t ms after the close (so P(Z > t) = 1 - exp(-stillRunning(t)) at a poll t). Polls every q ms;
 * past POLL_STEPS of them, the integral over even segments plus the half poll a first sight waits
 * on average.
 */
function meanZeroPoll(stillRunning: (t: number) => number, DT: number, q: number): number {
  const beyond = (t: number): number => 1 - Math.exp(-stillRunning(t));
  if (DT / q <= POLL_STEPS) {
    let z = 0;
    for (let t = 0; t < DT; t = Math.min(DT, t + q)) {
      const p = beyond(t);
      // Past the last request's end nothing is running: the later polls add nothing.
      if (p < 1e-12) break;
      z += (Math.min(DT, t + q) - t) * p;
    }
    return z;
  }
  const h = DT / POLL_STEPS;
  let z = 0;
  let prev = beyond(0);
  for (let k = 1; k <= POLL_STEPS; k++) {
    const next = beyond(k * h);
    z += (h * (prev + next)) / 2;
    prev = next;
    if (prev < 1e-12) break;
  }
  // A poll sees zero up to q after it happens: q / 2 on average, where anything ran at the close.
  return Math.min(DT, z + (q / 2) * beyond(0));
}

/** Expected losses of one termination in `inp.order`, by fate (the simulation's fates). */
export function expectedLoss(inp: ExpectedInputs): ExpectedLoss {
  const { lb, pod: p, durations: d } = inp;
  const lambda = inp.rps / inp.pods / 1000;
  const G = excessFunction(d);
  const c = lb.connectMs;
  const F = lb.downAfterFirstFailMs;
  const prop = lb.propagationMs;
  const { lbBufferMs: B, drainTimeoutMs: DT, pollIntervalMs: q, terminationDrainDurationMs: tdd } = p;
  const r = lb.reusesConnections;
  // A request sent while the LB's idle connections to the pod are warm needs no connect.
  const cPre = r ? 0 : c;
  const fates: Record<Fate, number> = { redispatched: 0, refused: 0, cutAtDown: 0, cutAtExit: 0, keepAliveRace: 0 };
  const refusedTo = (n: number): void => {
    fates[lb.redispatch ? 'redispatched' : 'refused'] += Math.max(0, n);
  };
  const raceTo = (n: number): void => {
    fates[lb.retryOnEmptyResponse ? 'redispatched' : 'keepAliveRace'] += Math.max(0, n);
  };
  /** λ x the arrivals of (lo, hi) with connect `conn` still running at X (lo may be -Infinity). */
  const running = (X: number, lo: number, hi: number, conn: number): number =>
    hi <= lo ? 0 : lambda * (G(X - hi - conn) - (lo === -Infinity ? 0 : G(X - lo - conn)));
  const U = phases(lb.probeIntervalMs);
  let beyond = 0;

  const order = inp.order === 'soft-drain' && !lb.softSignal ? 'health-first' : inp.order;
  if (order === 'soft-drain') {
    // The first probe after the soft answer (at U) stops new requests; the drain at B waits for the
    // ones before it, up to the drain timeout; then health fails (DOWN at U2 + F) and the proxy
    // exits after terminationDrainDuration. Lost: what still runs when the first of the two comes.
    for (const u of U)
      for (const u2 of U) {
        const downFirst = lb.flushOnDown && u2 + F < tdd;
        const X = B + DT + (downFirst ? u2 + F : tdd);
        const n = running(X, -Infinity, u, cPre) / (U.length * U.length);
        fates[downFirst ? 'cutAtDown' : 'cutAtExit'] += n;
        beyond += n;
      }
  } else if (order === 'health-first') {
    for (const u of U) {
      const w = 1 / U.length;
      const down = u + F;
      const sendsUntil = down + prop;
      // DOWN's flush: everything in flight or connecting then, E[D] + connect per unit of rate.
      if (lb.flushOnDown) fates.cutAtDown += w * lambda * G(-cPre);
      // After a flush the idle connections are gone: new requests connect.
      const conn = lb.flushOnDown ? c : cPre;
      const lo = lb.flushOnDown ? down : -Infinity;
      const idle = !lb.flushOnDown && r ? inp.idleAtClose : 0;
      // The listener close at B: a request accepted within one connect before it meets the race, one
      // still connecting is refused.
      const acceptedUntil = conn > 0 ? Math.min(sendsUntil, B - c - conn) : Math.min(sendsUntil, B);
      if (conn > 0) {
        raceTo(w * lambda * Math.max(0, Math.min(B - conn, sendsUntil) - Math.max(B - c - conn, lo)));
        refusedTo(w * lambda * Math.max(0, Math.min(B, sendsUntil) - Math.max(B - conn, lo)));
      }
      const after = Math.max(0, sendsUntil - B);
      const pooled = expectedCapped(lambda * after, idle);
      refusedTo(w * (lambda * after - pooled));
      const tau = lambda > 0 ? pooled / lambda : 0;
      const X = B + DT + tdd;
      const n = w * (running(X, lo, acceptedUntil, conn) + lambda * (G(X - B - tau) - G(X - B)));
      fates.cutAtExit += n;
      beyond += n;
    }
  } else {
    // drain-first: the listeners close at 0; in-flight reaches zero at Z (a poll), health fails then,
    // DOWN at Z + U2 + F, the LB stops sending `prop` later, the proxy exits at Z + B + tdd.
    const oldShift = r ? 0 : c;
    if (!r) {
      raceTo(lambda * c);
      refusedTo(lambda * c);
    }
    const idle = r ? inp.idleAtClose : 0;
    let tau = 0;
    let pooled = 0;
    let meanZ = 0;
    // The pool's share depends on how long the LB sends, which depends on Z, which the pooled
    // requests lengthen: two more rounds settle it (none without idle connections).
    for (let round = 0; round < (idle > 0 ? 3 : 1); round++) {
      const lambdaAfter = (m: number): number => lambda * (G(m + oldShift) + (tau > 0 ? G(m - tau) - G(m) : 0));
      meanZ = meanZeroPoll(lambdaAfter, DT, q);
      const sends = meanZ + mean(U) + F + prop;
      pooled = expectedCapped(lambda * sends, idle);
      tau = lambda > 0 ? pooled / lambda : 0;
    }
    const sends = meanZ + mean(U) + F + prop;
    const connectingAtDown = lb.flushOnDown ? lambda * c : 0;
    refusedTo(lambda * sends - pooled - connectingAtDown);
    const still = (X: number): number => lambda * (G(X + oldShift) + (tau > 0 ? G(X - tau) - G(X) : 0));
    if (lb.flushOnDown) {
      // Anything still running at DOWN means the drain timed out: Z = DT and DOWN at DT + U2 + F.
      const n = mean(U.map((u2) => still(DT + u2 + F)));
      fates.cutAtDown += connectingAtDown + n;
      beyond += n;
    } else {
      const n = still(DT + B + tdd);
      fates.cutAtExit += n;
      beyond += n;
    }
  }
  const lost = fates.refused + fates.cutAtDown + fates.cutAtExit + fates.keepAliveRace;
  return { byFate: fates, lost, beyondDrainTimeout: beyond };
}
