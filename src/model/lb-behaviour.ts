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
  /** Whether a connection the backend refuses is re-sent to another backend. */
  resendsRefusedConnections: 'yes' | 'no' | 'unknown';
  resendDetail: string;
  /**
   * Whether a connection to the pod can carry another request after drain-first's proxy drain: the
   * LB reuses its connections to the pod, or passes the clients' own keep-alive connections
   * through. Envoy closes a connection only with the first response it begins after the drain, so
   * each such connection serves one more request in full (docs/envoy.md): in-flight can last two
   * requests, and a request can still arrive on an idle one after in-flight reached 0. Read for
   * drain-first only (the other orders drain after the LB has stopped sending).
   */
  reusesConnections: boolean;
  reuseDetail: string;
  /** The configured graceful signal, if any. */
  gracefulSignal?: GracefulSignal;
  /** Where the LB's probe actually lands (NLB instance + Local bypasses the sidecar). */
  probeReachesSidecar: boolean;
  /** The LB probes the pod IP (it runs in the cluster's network), so a ClusterIP health Service is reachable. */
  probesPodIp: boolean;
};

export type GracefulSignal = {
  /** HTTP status the health endpoint answers while soft-draining. */
  status: number;
  /** Body text the LB matches (F5 recv-disable, Citrix trofsString), if it matches on the body. */
  body?: string;
  /** The LB state the signal puts the backend in, in the vendor's words. */
  lbState: string;
  source: string;
  /** Clients the LB still sends to the backend after the signal (sticky ones), if any: then the drain refuses them. */
  stillSends?: string;
};
