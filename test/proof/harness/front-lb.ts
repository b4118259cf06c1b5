/**
 * The load balancer in front of the pods, as a run sees it: where clients connect, the state
 * changes it made to each server (DOWN, UP, NOLB) with their times, one log line per request, and
 * its own counters. Two kinds: a real HAProxy (harness/haproxy.ts) and a real Envoy doing active
 * health checks, the `envoy` LB model (harness/envoy-lb.ts). Each runs `gracegate lb-config`'s
 * output for the lab spec.
 */
import type { RequestLogLine, ServerEvent } from './haproxy';

/** Connection errors, retries, redispatches, aborted sessions and 5xx answers, summed over the servers. */
export type LbCounters = { econ: number; eresp: number; wretr: number; wredis: number; srvAbrt: number; hrsp5xx: number };

export interface FrontLb {
  readonly kind: 'haproxy' | 'envoy';
  /** `HAProxy 2.6.12-1+deb12u4`, `Envoy 1.36.4`. */
  readonly version: string;
  readonly port: number;
  readonly events: ServerEvent[];
  readonly requestLog: RequestLogLine[];
  /** The configuration it runs (the generated part untouched). */
  readonly configText: string;
  counters(): Promise<LbCounters>;
  waitStatus(server: string, status: RegExp, timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}
