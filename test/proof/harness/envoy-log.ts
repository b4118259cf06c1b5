/**
 * What each pod's Envoy logged of the HTTP requests it served (test/support/stream-end-log.ts), on
 * Envoy's own clock, and when the harness saw it die: the witness of what a pod really had in
 * flight, where the client's clock (a loaded event loop sees its events late) and HAProxy's (it
 * logs a response's end when it has passed it on) are not.
 */
import type { Pod } from './pod';

/** One HTTP request as a pod's Envoy logged it; times ms after the run's t0. */
export type EnvoyRequest = {
  /** The LB client's port (the harness's HAProxy sets it on every request), null without it. */
  clientPort: number | null;
  /** The long-lived client's stream, null for the load's requests. */
  session: string | null;
  startMs: number;
  /** When Envoy sent the response's last byte (or ended the stream). */
  endMs: number;
  code: number | null;
  flags: string;
  details: string;
};

export type PodEnvoyLog = {
  pod: string;
  server: string;
  /** When the harness killed it (SIGKILL sent) or, never killed, saw it exit; ms after t0. */
  diedAtMs: number | null;
  requests: EnvoyRequest[];
};

/** A pod's log, read to its end: call once its Envoy has exited and `logClosed` has resolved. */
export function podEnvoyLog(pod: Pod, server: string, t0: number): PodEnvoyLog {
  const died = pod.proxy.killedAtMs ?? pod.proxy.exitedAtMs;
  return {
    pod: pod.name,
    server,
    diedAtMs: died === null ? null : died - t0,
    requests: pod.proxy
      .streamEnds()
      .filter((e) => e.kind === 'http')
      .map((e) => ({
        clientPort: e.clientPort,
        session: e.session,
        startMs: e.startMs - t0,
        endMs: e.startMs + e.durationMs - t0,
        code: e.code,
        flags: e.flags,
        details: e.details,
      })),
  };
}

/**
 * The end of the last response of the load the pod served, on Envoy's clock (the long-lived
 * clients' streams are judged by their own account); null when it served none.
 */
export function lastServedEndMs(log: PodEnvoyLog): number | null {
  const served = log.requests.filter((r) => r.session === null);
  return served.length === 0 ? null : Math.max(...served.map((r) => r.endMs));
}

/** The requests any pod's Envoy logged from `clientPort` that started within [fromMs, toMs]. */
export function loggedFrom(logs: readonly PodEnvoyLog[], clientPort: number, fromMs: number, toMs: number): Array<EnvoyRequest & { pod: string }> {
  return logs.flatMap((l) =>
    l.requests.filter((r) => r.clientPort === clientPort && r.startMs >= fromMs && r.startMs <= toMs).map((r) => ({ ...r, pod: l.pod })),
  );
}
