import type { DerivationInput, Derived } from './derived';

/**
 * What the rest of the plan needs to know about any LB, whatever its vendor: how long it takes
 * to notice a failing health endpoint, what it does to live sessions when it marks DOWN, whether
 * it re-sends a refused connection elsewhere, and which "stop new, keep existing" signal it has.
 */
export type LbBehaviour<Model extends string = string> = {
  /** The vendor, as the registry keys it (src/lb/registry.ts). */
  model: Model;
  /** Worst-case seconds from the health endpoint flipping to the LB marking the backend DOWN. */
  detect: Derived;
  /** Seconds between two probes of a healthy backend (the period the first failing probe falls in). */
  probeIntervalSeconds: number;
  /** Worst-case seconds from a new pod answering 200 to the LB sending it traffic (UP again). */
  recover: Derived;
  /** Seconds after DOWN before new connections stop arriving (NLB only, measured by users). */
  propagation: DerivationInput & { value: number };
  /**
   * A second way out of the pool, started by the pod's deletion whatever the sequence: a controller
   * deregisters the target (AWS Load Balancer Controller, ip targets). Seconds from the deletion
   * until that stops new connections; absent: only the failing probe takes the pod out.
   */
  deregistrationLag?: DerivationInput & { value: number };
  /** True when DOWN kills established sessions (flush, RST, silent drop). */
  cutsSessionsOnDown: boolean;
  /** What DOWN does to live sessions, in the vendor's words. */
  onDown: string;
  /** Where the vendor says what DOWN does to live sessions. */
  onDownSource: FactSource;
  /**
   * What the LB does with a connection the pod refuses (drain-first's listeners are closed until
   * DOWN): `resent` to another backend, `failed` to the client, or `not-known` (no documentation and
   * no measurement says; the planner then takes the worse of the two).
   */
  refused: LbFact<RefusedConnection> & {
    /** How long a refused request holds its client before it fails or goes elsewhere (HAProxy: retries x 1 s), ms. */
    holdMs: number;
  };
  /**
   * Whether a request that got no answer on a connection the pod reset under it (the keep-alive race
   * at a listener close) is sent again: HAProxy `retry-on empty-response`, NetScaler's request retry.
   */
  resetRequestResent: LbFact<boolean>;
  /**
   * Whether a connection to the pod can carry another request after a listener close: the LB reuses
   * its connections to the pod, or passes the clients' own keep-alive connections through. Envoy
   * closes a connection only with the first response it begins after the drain, so each such
   * connection serves one more request in full (docs/envoy.md): in-flight can last two requests, and a
   * request can still arrive on an idle one after in-flight reached 0. `drainFirst` is what the LB
   * does behind drain-first (the only gracegate order that closes the listeners while the LB still
   * sends; HAProxy's lb-config writes `option http-server-close` for it), `otherOrders` behind the
   * others and the baselines.
   */
  reuse: { drainFirst: boolean; otherOrders: boolean; detail: string; source: FactSource };
  /**
   * The target type where a cloud controller registers the targets (AWS NLB): it, not the spec's
   * health exposure, decides whether the LB addresses nodes or pods. Absent for the other LBs.
   */
  cloudTargetType?: 'ip' | 'instance';
  /** The configured graceful signal, if any. */
  gracefulSignal?: GracefulSignal;
  /** Where the LB's probe actually lands (NLB instance + Local bypasses the sidecar). */
  probeReachesSidecar: boolean;
  /** The LB probes the pod IP (it runs in the cluster's network), so a ClusterIP health Service is reachable. */
  probesPodIp: boolean;
};

/** Where a fact about an LB comes from. */
export type FactSource = {
  /**
   * `vendor-doc`: the vendor's own documentation (or its own schema, CLI reference, source);
   * `measured`: measured on the real binary (docs/…); `users`: measured by users and reported in a
   * public issue; `not-known`: nothing establishes it (the value is then the planner's worst case).
   */
  kind: 'vendor-doc' | 'measured' | 'users' | 'not-known';
  /** The document, page or measurement, to be looked up. */
  ref: string;
};

/** One fact of an LB's behaviour: its value, in words, and where it comes from. */
export type LbFact<T> = { value: T; detail: string; source: FactSource };

export type RefusedConnection = 'resent' | 'failed' | 'not-known';

export type GracefulSignal = {
  /** HTTP status the health endpoint answers while soft-draining. */
  status: number;
  /** Body text the LB matches (F5 recv-disable, Citrix trofsString), if it matches on the body. */
  body?: string;
  /** The LB state the signal puts the backend in, in the vendor's words. */
  lbState: string;
  /** The spec field that configures it. */
  source: string;
  /** Where the vendor documents the signal and the state it leads to. */
  doc: FactSource;
  /** Clients the LB still sends to the backend after the signal (sticky ones), if any: then the drain refuses them. */
  stillSends?: string;
};
