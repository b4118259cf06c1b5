/**
 * How each long-lived client's stream ended (harness/long-lived.ts), and what each termination
 * did to the streams on its pod.
 *
 * The cause is read from witnesses a loaded machine cannot shift, never from the client's own
 * times: on a loaded machine the test process's event loop saw opens, messages and closes hundreds
 * of ms late (lags up to 1.2 s measured at load average 20; HAProxy adds ~200 ms to SSE), so
 * windows on the client's clock (a stream's age at its close, its close against Envoy's exit)
 * called rotated streams `other` and cut ones `other` (docs/flakes.json). The witnesses:
 *
 *   - Envoy's own line for the stream (test/support/stream-end-log.ts): `max_duration_timeout`
 *     (HTTP) or `DT` (tcp_proxy) says Envoy's duration limit ended it: the plan's rotation;
 *   - the instant the harness killed the pod's Envoy (PodTimes.killedAtMs, taken before the
 *     signal): a stream Envoy never logged an end for, whose client saw it end after that instant,
 *     was still held by Envoy when it died (Envoy logs every stream it ends, at once).
 */
import type { StreamEnd } from '../../support/stream-end-log';
import { endedByDurationLimit } from '../../support/stream-end-log';
import type { LlClientSummary, LlSession, LongLivedClientKind, LongLivedClients } from './long-lived';

/** Why a stream ended. */
export type CloseCause = 'rotation' | 'envoy-exit' | 'lb-down' | 'client-stop' | 'other';

/** A pod's events and Envoy's log as the classifier needs them (epoch ms). */
export type PodTimes = {
  upstreamPort: number;
  pod: string;
  server: string;
  terminationStartMs: number | null;
  proxyExitMs: number | null;
  /** When the harness sent the pod's Envoy SIGKILL (PodProxy.killedAtMs), null if it never did. */
  killedAtMs: number | null;
  lbDownMs: number | null;
  /** Every stream end the pod's Envoy logged, read to the end of its log. */
  streamEnds: readonly StreamEnd[];
};

/**
 * Envoy's line for a session: by its SESSION_HEADER for the HTTP kinds; for TCP by the client's
 * port, the line that started nearest the client's open (a port is used again only by a later
 * connection, after this one closed).
 */
export function envoyEndOf(s: LlSession, pod: PodTimes): StreamEnd | null {
  if (s.kind !== 'tcp') return pod.streamEnds.find((e) => e.kind === 'http' && e.session === s.id) ?? null;
  if (s.localPort === null) return null;
  const mine = pod.streamEnds.filter((e) => e.kind === 'tcp' && e.clientPort === s.localPort);
  return mine.reduce<StreamEnd | null>((best, e) => (best === null || Math.abs(e.startMs - s.openMs) < Math.abs(best.startMs - s.openMs) ? e : best), null);
}

/**
 * Report only (no test asserts it; docs/long-lived.md's flush row): a close the client saw this
 * near the LB's DOWN of its pod, of a stream Envoy saw its downstream end (`DC`), is the LB's
 * flush at DOWN (HAProxy's shutdown-sessions).
 */
const LB_DOWN_BEFORE_MS = 100;
const LB_DOWN_AFTER_MS = 1000;

/**
 * `rotation` when Envoy's duration limit ended the stream; `envoy-exit` when Envoy logged no end
 * for it, was killed, and the client saw the end after the kill; `lb-down` (report only) as
 * LB_DOWN_* says; the client's own stop; else `other` (its Envoy line, or none, is in the report).
 */
export function closeCause(s: LlSession, pods: readonly PodTimes[]): CloseCause {
  if (s.how === 'stopped by the client') return 'client-stop';
  const pod = pods.find((p) => p.upstreamPort === s.upstreamPort);
  if (s.closeMs === null || !pod) return 'other';
  const end = envoyEndOf(s, pod);
  if (end !== null && endedByDurationLimit(end)) return 'rotation';
  if (end === null && pod.killedAtMs !== null && s.closeMs >= pod.killedAtMs) return 'envoy-exit';
  if (
    end !== null &&
    end.flags.split(',').includes('DC') &&
    pod.lbDownMs !== null &&
    s.closeMs >= pod.lbDownMs - LB_DOWN_BEFORE_MS &&
    s.closeMs <= pod.lbDownMs + LB_DOWN_AFTER_MS
  )
    return 'lb-down';
  return 'other';
}

/** What one termination did to the streams on its pod. */
export type LlTermination = {
  pod: string;
  server: string;
  /** Streams on the pod when its termination started. */
  openAtStart: number;
  /** Of those, how each ended. */
  endedBy: Partial<Record<CloseCause, number>>;
  /** The reconnects the termination caused: streams on the pod closed after its start (each client reconnected once per close). */
  reconnects: number;
  /** Streams the pod opened after its termination started (a reconnect that landed on the leaving pod). */
  openedAfterStart: number;
};

/** Envoy's line for a session, times relative to the run's t0. */
export type LlEnvoyEnd = { startMs: number; durationMs: number; flags: string; details: string };

export type LlReport = {
  kinds: LongLivedClientKind[];
  /** max_stream_duration the pods' Envoys ran with (ms), null without the plan's bound. */
  boundMs: number | null;
  clients: LlClientSummary[];
  /** Every stream close, by cause (the clients' own stop excluded). */
  closes: Partial<Record<CloseCause, number>>;
  terminations: LlTermination[];
  /** Every session, times relative to the first termination's start. */
  sessions: Array<
    Omit<LlSession, 'openMs' | 'closeMs' | 'lastMsgMs'> & {
      openMs: number;
      closeMs: number | null;
      lastMsgMs: number | null;
      cause: CloseCause;
      /** Rotated, and its client saw the close only after Envoy was killed (the close Envoy delays after a rotation, cut short). */
      closedAtExit: boolean;
      pod: string | null;
      /** How Envoy logged its end; null when it logged none. */
      envoyEnd: LlEnvoyEnd | null;
    }
  >;
};

export function longLivedReport(clients: LongLivedClients, boundMs: number | null, pods: readonly PodTimes[], t0: number): LlReport {
  const podOf = (s: LlSession) => pods.find((p) => p.upstreamPort === s.upstreamPort);
  const sessions = clients.sessions.map((s) => {
    const pod = podOf(s);
    const cause = closeCause(s, pods);
    const end = pod ? envoyEndOf(s, pod) : null;
    return {
      ...s,
      cause,
      closedAtExit: cause === 'rotation' && s.closeMs !== null && pod?.killedAtMs != null && s.closeMs >= pod.killedAtMs,
      pod: pod?.pod ?? null,
      envoyEnd: end === null ? null : { startMs: end.startMs - t0, durationMs: end.durationMs, flags: end.flags, details: end.details },
    };
  });
  const closes: Partial<Record<CloseCause, number>> = {};
  for (const s of sessions) if (s.cause !== 'client-stop') closes[s.cause] = (closes[s.cause] ?? 0) + 1;
  const terminations = pods
    .filter((p) => p.terminationStartMs !== null)
    .map((p): LlTermination => {
      const start = p.terminationStartMs!;
      const mine = sessions.filter((s) => s.upstreamPort === p.upstreamPort);
      const atStart = mine.filter((s) => s.openMs < start && (s.closeMs === null || s.closeMs > start));
      const endedBy: Partial<Record<CloseCause, number>> = {};
      for (const s of atStart) endedBy[s.cause] = (endedBy[s.cause] ?? 0) + 1;
      const after = mine.filter((s) => s.openMs >= start);
      return {
        pod: p.pod,
        server: p.server,
        openAtStart: atStart.length,
        endedBy,
        reconnects: [...atStart, ...after].filter((s) => s.cause !== 'client-stop').length,
        openedAfterStart: after.length,
      };
    });
  return {
    kinds: [...new Set(clients.sessions.map((s) => s.kind))],
    boundMs,
    clients: clients.summaries(),
    closes,
    terminations,
    sessions: sessions.map((s) => ({
      ...s,
      openMs: s.openMs - t0,
      closeMs: s.closeMs === null ? null : s.closeMs - t0,
      lastMsgMs: s.lastMsgMs === null ? null : s.lastMsgMs - t0,
    })),
  };
}
