/**
 * Envoy's own word on every stream it served: one access-log line per HTTP stream on the pod's
 * traffic listener and per tcp_proxy connection, on Envoy's stderr, when the stream ends: Envoy's
 * clock for its start and duration, and what ended it. A client's own clock cannot say it: on a
 * loaded machine its event loop sees an open, a message or a close hundreds of ms after the fact
 * (HAProxy adds ~200 ms to SSE), and HAProxy logs a response's end when it has passed it on (up to
 * tens of ms after Envoy sent its last byte, measured at load average 19). Each HTTP line names
 * the long-lived client's stream (SESSION_HEADER) and the LB client's connection (CLIENT_PORT_HEADER,
 * which the harness's HAProxy frontend sets) when the request carried them. Measured on 1.36.4 and
 * 1.40.0: a stream that max_stream_duration ended has RESPONSE_CODE_DETAILS `max_duration_timeout`,
 * a tcp_proxy connection that max_downstream_connection_duration closed the flag `DT`; Envoy
 * writes no line for a stream it still held when it was killed, nor for a connection it never
 * accepted.
 *
 * Envoy buffers access logs and writes them on a timer, `--file-flush-interval-msec` (pilot-agent
 * passes 1000; 1.36 has no size knob): measured, the lines reached stderr 69-975 ms after their
 * streams ended, and a SIGKILL (pilot-agent's abort at terminationDrainDuration) loses what the
 * buffer holds. A pod whose log is read runs with STREAM_END_FLUSH_MS instead.
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

/** The request header the harness's HAProxy frontend sets to the client's port: which LB client connection a request came on. */
export const CLIENT_PORT_HEADER = 'x-gracegate-client-port';

/** One stream's end, as Envoy logged it; times epoch ms. */
export type StreamEnd = {
  kind: 'http' | 'tcp';
  /** http: the stream's SESSION_HEADER, null without one. */
  session: string | null;
  /** http: CLIENT_PORT_HEADER (null without one); tcp: the client's own port (DOWNSTREAM_REMOTE_PORT). */
  clientPort: number | null;
  startMs: number;
  durationMs: number;
  /** http: the response code Envoy sent (0: none, the stream ended before a response); tcp: null. */
  code: number | null;
  /** RESPONSE_FLAGS, `-` for none (`DT`: a duration limit closed it, `DC`: the downstream went away). */
  flags: string;
  /** RESPONSE_CODE_DETAILS (http), `-` for tcp. */
  details: string;
};

const header = (name: string) => `%REQ(${name.toUpperCase()})%`;

/** The access-log format for `kind`: fields separated by one space, none of them containing one (`-` for none). */
export function streamEndLogFormat(kind: StreamEnd['kind']): string {
  const ids = kind === 'http' ? `${header(SESSION_HEADER)} ${header(CLIENT_PORT_HEADER)}` : '- %DOWNSTREAM_REMOTE_PORT%';
  const [code, details] = kind === 'http' ? ['%RESPONSE_CODE%', '%RESPONSE_CODE_DETAILS%'] : ['-', '-'];
  return `${STREAM_END_LOG_MARK} ${kind} ${ids} %START_TIME(%s.%3f)% %DURATION% ${code} %RESPONSE_FLAGS% ${details}\n`;
}

const LINE = new RegExp(`^${STREAM_END_LOG_MARK} (http|tcp) (\\S+) (-|\\d+) (\\d+\\.\\d{3}) (\\d+) (-|\\d+) (\\S+) (\\S+)$`);

/** Parses one stderr line; null for any other line. */
export function parseStreamEnd(line: string): StreamEnd | null {
  const m = LINE.exec(line.trim());
  if (!m) return null;
  return {
    kind: m[1] as StreamEnd['kind'],
    session: m[2] === '-' ? null : m[2]!,
    clientPort: m[3] === '-' ? null : Number(m[3]),
    startMs: Math.round(Number(m[4]) * 1000),
    durationMs: Number(m[5]),
    code: m[6] === '-' ? null : Number(m[6]),
    flags: m[7]!,
    details: m[8]!,
  };
}

/** Ended by Envoy's duration limit: max_stream_duration (http) or max_downstream_connection_duration (tcp). */
export function endedByDurationLimit(e: StreamEnd): boolean {
  return e.kind === 'http' ? e.details === 'max_duration_timeout' : e.flags.split(',').includes('DT');
}
