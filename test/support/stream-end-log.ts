/**
 * Envoy's own word on how a stream ended: one access-log line per stream, on Envoy's stderr, for
 * the streams of the long-lived test clients (the HTTP ones carry SESSION_HEADER; every tcp_proxy
 * connection of the test bootstrap is one of theirs). A client's own clock cannot say it: on a
 * loaded machine its event loop sees an open, a message or a close hundreds of ms after the fact
 * (HAProxy adds ~200 ms to SSE), while Envoy stamps the stream with its own start and duration and
 * says what ended it. Measured on 1.36.4 and 1.40.0: a stream that max_stream_duration ended has
 * RESPONSE_CODE_DETAILS `max_duration_timeout`, a tcp_proxy connection that
 * max_downstream_connection_duration closed the flag `DT`; Envoy writes the line when the stream
 * ends, and none for a stream it still held when it was killed.
 *
 * Envoy buffers access logs and writes them on a timer, `--file-flush-interval-msec` (pilot-agent
 * passes 1000; 1.36 has no size knob): measured, the lines reached stderr 69-975 ms after their
 * streams ended, and a SIGKILL (pilot-agent's abort at terminationDrainDuration) loses what the
 * buffer holds. A pod that must account for its streams runs with STREAM_END_FLUSH_MS instead.
 */

/**
 * The flush interval of a pod whose stream ends are read: a rotation at the bound precedes the
 * drain's in-flight 0, and the kill comes terminationDrainDuration (0.5 s in the lab) after it,
 * fifty intervals later. Only when Envoy writes its logs changes; nothing it does with traffic.
 */
export const STREAM_END_FLUSH_MS = 10;

/** Starts every stream-end line on stderr (beside ADMIN_LOG_MARK's admin lines). */
export const STREAM_END_LOG_MARK = 'gracegate-stream-end';

/** The request header that names a long-lived client's stream (its session) in Envoy's log. */
export const SESSION_HEADER = 'x-gracegate-session';

/** One stream's end, as Envoy logged it; times epoch ms. */
export type StreamEnd = {
  kind: 'http' | 'tcp';
  /** http: the stream's SESSION_HEADER; tcp: the client's port (DOWNSTREAM_REMOTE_PORT). */
  key: string;
  startMs: number;
  durationMs: number;
  /** RESPONSE_FLAGS, `-` for none (`DT`: a duration limit closed it, `DC`: the downstream went away). */
  flags: string;
  /** RESPONSE_CODE_DETAILS (http), `-` for tcp. */
  details: string;
};

/** The access-log format for `kind`: fields separated by one space, none of them containing one. */
export function streamEndLogFormat(kind: StreamEnd['kind']): string {
  const key = kind === 'http' ? `%REQ(${SESSION_HEADER.toUpperCase()})%` : '%DOWNSTREAM_REMOTE_PORT%';
  const details = kind === 'http' ? '%RESPONSE_CODE_DETAILS%' : '-';
  return `${STREAM_END_LOG_MARK} ${kind} ${key} %START_TIME(%s.%3f)% %DURATION% %RESPONSE_FLAGS% ${details}\n`;
}

/** Parses one stderr line; null for any other line. */
export function parseStreamEnd(line: string): StreamEnd | null {
  const m = new RegExp(`^${STREAM_END_LOG_MARK} (http|tcp) (\\S+) (\\d+\\.\\d{3}) (\\d+) (\\S+) (\\S+)$`).exec(line.trim());
  if (!m) return null;
  return {
    kind: m[1] as StreamEnd['kind'],
    key: m[2]!,
    startMs: Math.round(Number(m[3]) * 1000),
    durationMs: Number(m[4]),
    flags: m[5]!,
    details: m[6]!,
  };
}

/** Ended by Envoy's duration limit: max_stream_duration (http) or max_downstream_connection_duration (tcp). */
export function endedByDurationLimit(e: StreamEnd): boolean {
  return e.kind === 'http' ? e.details === 'max_duration_timeout' : e.flags.split(',').includes('DT');
}
