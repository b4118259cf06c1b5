/**
 * Public, readonly types of the hc runtime, and the ports through which every side effect is
 * injected (clock, Envoy, state file, log), so the machine runs in tests without sleeping.
 */
import type { ControlBody, EnvoyProfile, EventKey, Flow, HcState } from '../contract/hc';

export type { EnvoyProfile, HealthAnswer } from '../contract/hc';

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
  /**
   * Whether a drain already reached this Envoy (its listeners stopped or draining), for a start
   * without a state file to trust: Envoy's /ready says LIVE either way.
   */
  drainSent(): Promise<boolean>;
  /**
   * Whether Envoy serves the configuration it was sent: null when it does (no listener or cluster
   * still warming, and every xDS it subscribes to applied at least once), else what it still
   * waits for. Envoy's /ready says LIVE before a listener's routes arrive (istio/istio#19980).
   */
  configServed(): Promise<string | null>;
  /** What the adapter has learned about the proxy so far (GET /state `envoy.proxy`). */
  profile(): EnvoyProfile;
}

export type LogLevel = 'info' | 'warn' | 'error';
export type Logger = (level: LogLevel, msg: string, fields?: Readonly<Record<string, unknown>>) => void;

export interface EventMark {
  readonly at: number;
  /** true for [5] and [6]: the time the LB is expected to act, not an observation. */
  readonly estimated: boolean;
  readonly note?: string;
}

/** The six events of the sequence under way, by name; null until it has happened. */
export type EventMarks = { [K in EventKey]: EventMark | null };

/**
 * The state file's format. 2: events by name (1 had them in an array). A file of another version
 * is not resumed: the sidecar starts fresh, as with an unreadable file (the state file lives on the
 * pod's emptyDir, and a new sidecar image means a new pod, so this happens only by hand).
 */
export const STATE_FILE_VERSION = 2;

/** Everything the sidecar must remember across a restart; written on every transition. */
export interface PersistedState {
  readonly version: typeof STATE_FILE_VERSION;
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
  events: EventMarks;
  history: { state: HcState; at: number; reason: string }[];
}

/** The file (or memory) the persisted state lives in. */
export interface StateStore {
  /** undefined when there is nothing usable (logged by the store; `untrusted()` says why, if a file was there). */
  load(): PersistedState | undefined;
  /** Why the last load found a file it could not trust (unreadable, invalid, dated ahead), or null. */
  untrusted(): string | null;
  save(state: PersistedState): void;
}

/** An answer to a control request: an HTTP status and a JSON body. */
export interface ControlAnswer<B extends ControlBody = ControlBody> {
  readonly status: number;
  readonly json: B;
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
  /** Starts on a state file that could not be trusted (FAULT until Envoy was asked whether the drain was sent). */
  untrustedStateFiles: number;
  /** Witness-port requests from an address no kubelet hook comes from (answered 403, witness-sources.ts). */
  refusedWitnessCallers: number;
}
