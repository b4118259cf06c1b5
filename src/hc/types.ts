/**
 * Public, readonly types of the hc runtime, and the ports through which every side effect is
 * injected (clock, Envoy, state file, log), so the machine runs in tests without sleeping.
 */
import type { Flow, HcState } from './states';

/** Wall clock and timers. Timestamps are epoch milliseconds. */
export interface Clock {
  now(): number;
  /** Calls `fn` after `ms` (0 or less: on the next turn); returns a cancel function. */
  setTimer(ms: number, fn: () => void): () => void;
}

/** What Envoy's admin `/ready` says (the `ServerInfo.State` names). */
export type EnvoyServerState = 'LIVE' | 'DRAINING' | 'PRE_INITIALIZING' | 'INITIALIZING';

/** The Envoy admin calls the machine needs. Every method rejects on timeout, transport error or garbage. */
export interface EnvoyPort {
  /** GET /ready. */
  serverState(): Promise<EnvoyServerState>;
  /** GET /stats, summed by the counting rules. */
  inFlight(): Promise<number>;
  /** The drain calls of this Envoy's version (docs/hc.md): POST each, in order. */
  drainListeners(): Promise<void>;
  /** What the adapter has learned about the proxy so far (GET /state `envoy.proxy`). */
  profile(): EnvoyProfile;
}

/** The proxy as the Envoy adapter sees it: its version, the drain calls it uses, how it counts. */
export interface EnvoyProfile {
  /** `/server_info` version string; null until it has been read. */
  readonly versionString: string | null;
  /** `x.y.z`; null when unknown or unparseable. */
  readonly version: string | null;
  /** The admin paths `drainListeners()` POSTs, in order. */
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
}

export type LogLevel = 'info' | 'warn' | 'error';
export type Logger = (level: LogLevel, msg: string, fields?: Readonly<Record<string, unknown>>) => void;

/** The six events of a termination, numbered as in docs/facts.md §1. */
export const EVENT_NAMES = [
  'lb-health-fails', // [1]
  'readiness-fails', // [2]
  'proxy-drain-starts', // [3]
  'in-flight-zero', // [4]
  'lb-marks-down', // [5] estimated: the sidecar cannot see the LB
  'lb-resets-sessions', // [6] estimated
] as const;

export interface EventMark {
  readonly at: number;
  /** true for [5] and [6]: the time the LB is expected to act, not an observation. */
  readonly estimated: boolean;
  readonly note?: string;
}

/** Everything the sidecar must remember across a restart; written on every transition. */
export interface PersistedState {
  readonly version: 1;
  state: HcState;
  enteredAt: number;
  reason: string;
  /** null while OPEN (and in a FAULT no sequence started in). */
  flow: Flow | null;
  sequenceStartedAt: number | null;
  /** Start of the current LB-buffer wait (before the proxy drain, or drain-first's CLOSING). */
  bufferStartedAt: number | null;
  /** Both drain_listeners calls answered 200. */
  drainAckedAt: number | null;
  drainTimedOut: boolean;
  /** Index 0 is event [1]. */
  events: (EventMark | null)[];
  history: { state: HcState; at: number; reason: string }[];
}

/** The file (or memory) the persisted state lives in. */
export interface StateStore {
  /** undefined when there is nothing usable (logged by the store). */
  load(): PersistedState | undefined;
  save(state: PersistedState): void;
}

export interface HealthAnswer {
  readonly status: number;
  readonly body: string;
}

/** An answer to a control request: an HTTP status and a JSON body. */
export interface ControlAnswer {
  readonly status: number;
  readonly json: Readonly<Record<string, unknown>>;
}

export interface MachineCounters {
  pollErrors: number;
  drainCallErrors: number;
  drainTimeouts: number;
  refusedEvents: number;
  stateFileErrors: number;
  transitions: number;
  /** Entries into FAULT (the start-up state, waiting for Envoy's /ready, is not an entry). */
  faultEntries: number;
  /** /wait-closed waiters answered early to make room for a newer one. */
  displacedWaiters: number;
}
