/**
 * The contract between the planner side of gracegate (plan, pod changes, lb-config, the CLI) and
 * the hc sidecar: the names both sides write and read, the sidecar's HTTP paths and ports, and
 * the JSON bodies it answers with. Every one of them is defined here and nowhere else. This module
 * imports nothing, so the sidecar loads it without loading any planner code (test/layers.test.ts).
 */

// ---- states (the body of every health answer) ----

/** Answering 200 to the LB and to readiness; no sequence has started. */
export const OPEN = 'OPEN';
/**
 * Envoy answers and serves the configuration it was sent; readiness answers 200, the LB still 503:
 * the start hold (hc config `startHold`, docs/hc.md "The start hold"), until the kubelet's
 * readiness probe has been answered and the traffic path can lead to the pod. Then OPEN.
 */
export const WARMING = 'WARMING';
/** The proxy has been told to drain; waiting for in-flight to reach 0 (or the drain timeout). */
export const DRAINING = 'DRAINING';
/** The LB has been told to go away (soft or hard); waiting the LB buffer for it to act. */
export const CLOSING = 'CLOSING';
/** The sequence has finished: everything but liveness answers 503. Final. */
export const CLOSED = 'CLOSED';
/** Envoy's admin is unreachable, slow, talks garbage, or says Envoy is not LIVE: nothing says 200. */
export const FAULT = 'FAULT';

export const STATES = [WARMING, OPEN, DRAINING, CLOSING, CLOSED, FAULT] as const;
export type HcState = (typeof STATES)[number];

// ---- sequences ----

/**
 * The three termination orders (docs/facts.md §2), in that section's order. The planner chooses
 * one from the LB's behaviour; the sidecar runs it on /drain.
 */
export const SEQUENCES = ['soft-drain', 'health-first', 'drain-first'] as const;
export type Sequence = (typeof SEQUENCES)[number];

/**
 * The path through the sidecar's table a pod is on: one of the sequences (started by /drain), or
 * `manual` (started by /close-lb or /close, the manual steps).
 */
export const FLOWS = [...SEQUENCES, 'manual'] as const;
export type Flow = (typeof FLOWS)[number];

// ---- what each state means to everyone who answers, alerts on, draws or reads it ----

/** A health endpoint's verdict: 200, 503, or the soft signal the LB reads as "no new connections". */
export type Verdict = 'pass' | 'fail' | 'soft';

/**
 * One row per state. Everything that answers a probe (the sidecar), alerts on a state (the alert
 * rules) or reads one (verify --pod-state) takes it from this table, the dashboard lists the
 * states in STATES' order, and docs/hc.md's table is checked against it
 * (test/contract/hc-states.test.ts): a new state is a compile error here until each of these
 * questions has an answer for it.
 */
export type StateFacts = {
  /** `/health_check.html`, the LB's probe; per flow where the flow decides (no flow: 'fail'). */
  readonly lb: Verdict | { readonly [F in Flow]: Verdict };
  /** `/health`, K8s readiness (the EndpointSlice). */
  readonly readiness: 'pass' | 'fail';
  /** `/live`, K8s liveness. */
  readonly liveness: 'pass' | 'fail';
  /** The sequence has ended: `finished` in /state, and what the killed-before-the-end alert waits for. */
  readonly finished: boolean;
  /** Envoy's admin cannot be trusted: what the fault alert watches. */
  readonly fault: boolean;
  /**
   * How soon a reader outside the pod (verify --pod-state) may miss an event: 'resting' when none is
   * due (before a sequence, after it, or waiting for Envoy), 'running' when events are seconds apart,
   * 'ending' when the sequence's last events may come moments before the pod exits.
   */
  readonly watch: 'resting' | 'running' | 'ending';
};

export const STATE_FACTS: { readonly [S in HcState]: StateFacts } = {
  // Envoy serves; readiness 200 so that the kubelet finds the pod ready, the LB 503 until the start
  // hold has passed (docs/hc.md, "The start hold").
  WARMING: { lb: 'fail', readiness: 'pass', liveness: 'pass', finished: false, fault: false, watch: 'resting' },
  // Nothing has started: every party hears 200.
  OPEN: { lb: 'pass', readiness: 'pass', liveness: 'pass', finished: false, fault: false, watch: 'resting' },
  // drain-first keeps 200 (the proxy refuses new connections and the LB re-sends them; a 503 now
  // would make it flush the in-flight ones); soft-drain answers the soft signal until in-flight is 0.
  DRAINING: {
    lb: { 'soft-drain': 'soft', 'health-first': 'fail', 'drain-first': 'pass', manual: 'fail' },
    readiness: 'pass',
    liveness: 'pass',
    finished: false,
    fault: false,
    watch: 'running',
  },
  // Readiness stays 200 until the sequence is over: the EndpointSlice keeps the pod while the LB leaves.
  CLOSING: {
    lb: { 'soft-drain': 'soft', 'health-first': 'fail', 'drain-first': 'fail', manual: 'fail' },
    readiness: 'pass',
    liveness: 'pass',
    finished: false,
    fault: false,
    watch: 'ending',
  },
  CLOSED: { lb: 'fail', readiness: 'fail', liveness: 'pass', finished: true, fault: false, watch: 'resting' },
  // Liveness stays 200: restarting the sidecar cannot bring Envoy back, and a liveness loop would
  // only add preStop runs (contour#4851).
  FAULT: { lb: 'fail', readiness: 'fail', liveness: 'pass', finished: false, fault: true, watch: 'resting' },
};

/** The states whose row says `fact`, in STATES' order. */
export function statesWhere(fact: (f: StateFacts) => boolean): HcState[] {
  return STATES.filter((s) => fact(STATE_FACTS[s]));
}

// ---- the six events of a termination (docs/facts.md §1) ----

/**
 * `key` names the event in code and in the sidecar's state file, `name` on the wire (GET /state,
 * the metric label), `title` in the plan's timeline. [5] and [6] are the LB's own acts: the sidecar
 * cannot see them and records the time it expects them (`estimated`).
 */
export const TERMINATION_EVENTS = [
  { id: 1, key: 'lbHealthFails', name: 'lb-health-fails', title: 'LB health fails', estimated: false },
  { id: 2, key: 'readinessFails', name: 'readiness-fails', title: 'K8s readiness fails', estimated: false },
  { id: 3, key: 'proxyDrainStarts', name: 'proxy-drain-starts', title: 'proxy drain starts', estimated: false },
  { id: 4, key: 'inFlightZero', name: 'in-flight-zero', title: 'in-flight reaches zero', estimated: false },
  { id: 5, key: 'lbMarksDown', name: 'lb-marks-down', title: 'LB marks the backend DOWN', estimated: true },
  { id: 6, key: 'lbResetsSessions', name: 'lb-resets-sessions', title: 'LB resets sessions', estimated: true },
] as const;
export type TerminationEvent = (typeof TERMINATION_EVENTS)[number];
export type EventId = TerminationEvent['id'];
export type EventKey = TerminationEvent['key'];
export type EventName = TerminationEvent['name'];

export function terminationEvent(id: EventId): TerminationEvent {
  return TERMINATION_EVENTS[id - 1]!;
}

/** Each event by its key, for code that names one: `EVENT.proxyDrainStarts.id` is 3. */
export const EVENT = Object.fromEntries(TERMINATION_EVENTS.map((e) => [e.key, e])) as { readonly [E in TerminationEvent as E['key']]: E };

// ---- where the sidecar listens ----

/** One path per party (docs/facts.md §1), plus the control endpoints. */
export const PATHS = {
  /** The LB's pool endpoint, reached through the health Service (or hostPort). Health port. */
  lb: '/health_check.html',
  /** Kubernetes readiness of the sidecar. Health port. */
  readiness: '/health',
  /** Kubernetes liveness: 200 while the process is fine, draining included. Health port. */
  liveness: '/live',
  /** istio-proxy's preStop: blocks until the sequence has ended; its arrival is the termination witness. Witness port. */
  waitClosed: '/wait-closed',
  /**
   * The hc container's own preStop, an httpGet (the kubelet starts no process in the hc container):
   * asks for the sequence as POST /drain does, and blocks until it has ended. The sequence starts
   * only when /wait-closed witnesses the pod's termination too; alone (a restart of the hc) it
   * answers at once. Witness port.
   */
  hcStopping: '/hc-stopping',
  /** POST: start the sequence (`gracegate drain`, manual use; the hc's preStop is GET /hc-stopping). Control port. */
  drain: '/drain',
  /** POST: fail the LB answer only (manual step). Control port. */
  closeLb: '/close-lb',
  /** POST: drain the proxy now, close everything at 0 (manual step). Control port. */
  close: '/close',
  /** POST: back to OPEN, while the proxy has not been drained. Control port. */
  reopen: '/reopen',
  /** GET: the `StateBody` below. Control port. */
  state: '/state',
  /** GET: Prometheus text. Control port. */
  metrics: '/metrics',
} as const;

/** `POST /drain?witness=none`: start without waiting for the termination witness (manual use). */
export const NO_WITNESS_QUERY = { name: 'witness', value: 'none' } as const;

/** The control port listens here only: the state-changing endpoints are reachable from the pod alone. */
export const CONTROL_HOST = '127.0.0.1';

/** The sidecar's ports when neither the spec nor the config says otherwise. */
export const DEFAULT_PORTS = { health: 18180, control: 18181, witness: 18182 } as const;

/** The emptyDir holding the sidecar's state file, so a restarted sidecar resumes a running sequence. */
export const STATE_DIR = '/var/run/gracegate';
export const STATE_FILE = `${STATE_DIR}/state.json`;

// ---- what the sidecar answers ----

/** A health endpoint's answer: the status, and the state name (or the soft signal's body). */
export type HealthAnswer = {
  readonly status: number;
  readonly body: string;
};

/** The proxy as the sidecar's Envoy adapter sees it: its version, the drain calls, how it counts. */
export type EnvoyProfile = {
  /** `/server_info` version string; null until it has been read. */
  readonly versionString: string | null;
  /** `x.y.z`; null when unknown or unparseable. */
  readonly version: string | null;
  /**
   * Why `version` is null (null once it is known): not read yet (Envoy not LIVE), `/server_info`
   * failing (tried again with a backoff; `failures` so far), or a version string without x.y.z.
   * The drain uses the fallback calls meanwhile.
   */
  readonly versionUnknown: {
    readonly reason: 'not-read-yet' | 'server-info-failing' | 'unparseable';
    readonly detail: string;
    readonly failures: number;
  } | null;
  /** The admin paths the drain POSTs, in order. */
  readonly drainCalls: readonly string[];
  /** 'measured': a version whose drain semantics were measured; 'fallback': unknown or older. */
  readonly drainCallsBasis: 'measured' | 'fallback';
  readonly drainCallsWhy: string;
  /** The `/stats` query each poll sends (`type=Gauges` from Envoy 1.22). */
  readonly statsPath: string;
  /** `--drain-strategy` from `/server_info` ('Immediate' as Istio passes it); null until read. */
  readonly drainStrategy: string | null;
  /** How in-flight is counted (docs/hc.md); null before the first count. */
  readonly counting: { readonly basis: 'requests' | 'connections' | 'mixed'; readonly hcms: Readonly<Record<string, 'requests' | 'connections'>> } | null;
  /** The last count's parts, long-lived connections apart (LastCount); null before the first count. */
  readonly lastCount: LastCount | null;
};

/**
 * What the last in-flight count was made of. Long-lived connections are reported apart where
 * Envoy's stats tell them from requests (measured, docs/long-lived.md): a WebSocket is one request
 * and also one `downstream_cx_upgrades_active`; a TCP proxy or TLS passthrough connection is a
 * connection no HTTP connection manager holds. gRPC and SSE streams count exactly as requests do:
 * no Envoy stat tells them apart.
 */
export type LastCount = {
  /** What the drain waits for: requests + otherConnections. */
  readonly total: number;
  readonly requests: number;
  /** Counted connections no HTTP connection manager holds (TCP proxy, TLS passthrough). */
  readonly otherConnections: number;
  /** Upgraded (WebSocket) connections, included in `requests`; null when Envoy keeps no downstream_cx_upgrades_active (Istio: add it to proxyStatsMatcher.inclusionSuffixes). */
  readonly upgrades: number | null;
};

/** One of the six events in GET /state. Times are ISO 8601, null when not (yet) happened. */
export type EventReport = {
  id: EventId;
  name: EventName;
  at: string | null;
  /** true for [5] and [6]: the time the LB is expected to act, not an observation. */
  estimated: boolean;
  note?: string;
};

/** The body of GET /state (control port). Times are ISO 8601, null when none. */
export type StateBody = {
  state: HcState;
  enteredAt: string | null;
  reason: string;
  /** The sequence this sidecar runs on /drain (its config). */
  sequence: Sequence;
  /** The flow under way; null while OPEN (and in a FAULT no sequence started in). */
  flow: Flow | null;
  /** The sequence has finished (CLOSED): `gracegate drain` exits 0 on it. */
  finished: boolean;
  /** The latest time the current sequence can finish; null when none is running to an end. */
  finishBy: string | null;
  /** The last in-flight count read from Envoy; null before the first count. */
  inFlight: number | null;
  drainTimedOut: boolean;
  /** The proxy drain [3] has been recorded (the calls may still be retried). */
  proxyDrained: boolean;
  /** When Envoy answered 200 to every drain call; null before. */
  drainAckedAt: string | null;
  envoy: { lastPollAt: string | null; lastPollError: string | null; consecutiveFailures: number; proxy: EnvoyProfile };
  health: { lb: HealthAnswer; readiness: HealthAnswer; liveness: HealthAnswer };
  /** The six events, [1] to [6]. */
  events: EventReport[];
  /** GET /wait-closed requests waiting. */
  waiters: number;
  /** The latest state changes, oldest first (bounded). */
  history: { state: HcState; at: string | null; reason: string }[];
  /** After SIGTERM: whether the sidecar waits for one more scrape of /metrics before it exits, and why; null before. */
  finalScrape: FinalScrape | null;
};

/**
 * The sidecar's wait for Prometheus after SIGTERM: it waits only where something scraped /metrics
 * while the pod lived, and at most until the next scrape is due (a rollout must not pay the whole
 * bound per pod where nothing scrapes).
 */
export type FinalScrape = {
  readonly waits: boolean;
  readonly reason: string;
  /** The latest the wait lasts; null when it does not wait. */
  readonly until: string | null;
  /** A scrape came in the wait; null while waiting or when it did not wait. */
  scraped: boolean | null;
};

/** GET /state's body is a few KiB (six events, at most 50 history entries): a reader refuses more than this. */
export const STATE_BODY_MAX_BYTES = 256 * 1024;

/** POST /drain: 202 when the sequence started, 200 when it was already running or nothing is to be done. */
export type DrainBody = { draining: true; state: HcState; reason: string; finishBy: string | null } | { draining: false; state: HcState; reason: string };

/** POST /close-lb, /close, /reopen when accepted (200). */
export type StepBody = { ok: true; state: HcState; changed: boolean };

/** Any control request the transition table refuses (409), and why. */
export type RefusedBody = { ok: false; draining: false; state: HcState; event: string; reason: string };

/** A control request that failed inside the sidecar (500). */
export type ErrorBody = { error: string };

export type ControlBody = DrainBody | StepBody | RefusedBody | StateBody | ErrorBody;
