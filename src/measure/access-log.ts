/**
 * Istio's two default Envoy access-log formats, one line at a time (istio/istio
 * pilot/pkg/model/telemetry_logging.go: `EnvoyTextLogFormat`, `EnvoyJSONLogFormatIstio`; set by
 * meshConfig `accessLogEncoding: TEXT | JSON`). Only the fields gracegate reads are taken:
 * `%START_TIME%`, method, path, protocol, response code, response flags, `%DURATION%` (ms, from the
 * first byte received to the last byte sent), authority and route name.
 */
import { LONGEST_GRACE_PERIOD_SECONDS } from '../model/grace-period';

export type LogFormat = 'text' | 'json';

export interface LogEntry {
  readonly startTime: string;
  readonly method: string;
  readonly path: string;
  readonly protocol: string;
  readonly code: number;
  readonly flags: string;
  readonly durationMs: number;
  readonly authority: string;
  /** `%ROUTE_NAME%`; null when Envoy logs none (`-`). */
  readonly route: string | null;
}

/**
 * `[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE%
 * %RESPONSE_FLAGS% %RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS%
 * "%UPSTREAM_TRANSPORT_FAILURE_REASON%" %BYTES_RECEIVED% %BYTES_SENT% %DURATION% ...
 * "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%" ... %ROUTE_NAME%`. Quoted fields are matched up to the
 * next `" "`, since Envoy does not escape a quote inside a user agent.
 */
const TEXT_LINE = new RegExp(
  [
    '^\\[([^\\]]*)\\] "(\\S+) (\\S+) ([^"]*)" (\\d+) (\\S+) \\S+ \\S+ "[^"]*" \\d+ \\d+ (\\d+) \\S+ ',
    '"[^"]*" "(?:.*?)" "[^"]*" "([^"]*)" "[^"]*" \\S+ \\S+ \\S+ \\S+ \\S+ (\\S+)\\s*$',
  ].join(''),
);

const dash = (v: string | null | undefined) => (v === undefined || v === null || v === '-' || v === '' ? null : v);

/**
 * The longest `%DURATION%` measured, in ms: the longest grace period Kubernetes runs
 * (LONGEST_GRACE_PERIOD_SECONDS, docs/facts.md §6). No drain can wait for a longer request, so a
 * longer duration (1e15 ms, a 400-digit number) is a broken or forged line, reported and never
 * measured.
 */
export const MAX_DURATION_MS = LONGEST_GRACE_PERIOD_SECONDS * 1000;

/**
 * What one line of a `kubectl logs -c istio-proxy` is. The container's stdout interleaves Envoy's
 * access log with pilot-agent's own log and Envoy's (both `<RFC 3339 time>\t<level>\t<message>`,
 * Envoy's message starting `envoy `), from the pod's start up (`FLAG: --concurrency="0"`, xDS,
 * warnings) for as long as it runs.
 */
export type LineRead =
  | { readonly kind: 'entry'; readonly format: LogFormat; readonly entry: LogEntry }
  /** An access-log line whose duration cannot be measured: reported, never counted. */
  | { readonly kind: 'invalid'; readonly format: LogFormat; readonly reason: string }
  | { readonly kind: 'skipped'; readonly shape: SkippedShape };

/** The shapes of the lines that are no access-log line, as the report names them. */
export const SKIPPED_SHAPES = {
  'pilot-agent': "pilot-agent's own",
  envoy: "Envoy's own",
  other: 'of another shape',
  overlong: `longer than 64 KiB`,
} as const;
export type SkippedShape = keyof typeof SKIPPED_SHAPES;

/** pilot-agent's log line (istio/istio pkg/log), and Envoy's as pilot-agent starts it (`--log-format`). */
const PROXY_OWN_LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\t[a-z]+\t(envoy )?/;
/**
 * What pilot-agent's libraries write through Go's standard logger before its own log is set up, in
 * Go's default format: the real first line of a gateway pod on the cluster (Istio 1.31) is
 * `2026/12/02 16:27:39 INFO GOMEMLIMIT is already set, skipping package=…/automemlimit/memlimit`.
 */
const GO_LOG_LINE = /^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d(?:\.\d+)? /;

function durationProblem(ms: number, text: string): string | null {
  if (ms <= MAX_DURATION_MS) return null;
  const shown = text.length > 24 ? `${text.slice(0, 20)}... (${text.length} digits)` : text;
  return `duration ${shown} ms is longer than ${MAX_DURATION_MS} ms, the longest grace period Kubernetes runs`;
}

function readTextLine(line: string): LineRead | null {
  const m = TEXT_LINE.exec(line);
  if (!m) return null;
  const durationMs = Number(m[7]);
  const problem = durationProblem(durationMs, m[7]!);
  if (problem) return { kind: 'invalid', format: 'text', reason: problem };
  const entry: LogEntry = {
    startTime: m[1]!,
    method: m[2]!,
    path: m[3]!,
    protocol: m[4]!,
    code: Number(m[5]),
    flags: m[6]!,
    durationMs,
    authority: m[8]!,
    route: dash(m[9]),
  };
  return { kind: 'entry', format: 'text', entry };
}

/**
 * A JSON object with a `duration` is an access-log line. Envoy's typed JSON writes `%DURATION%` as
 * a number, so only a number counts: `""`, `true`, `[5]` and `"0x10"` are invalid lines (Number()
 * would read them as 0, 1, 5 and 16).
 */
function readJsonLine(line: string): LineRead | null {
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch {
    return null;
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return null;
  const r = o as Record<string, unknown>;
  if (!Object.hasOwn(r, 'duration')) return null;
  const d = r['duration'];
  if (typeof d !== 'number' || d < 0) {
    const shown = JSON.stringify(d) ?? String(d);
    return { kind: 'invalid', format: 'json', reason: `duration ${shown.length > 24 ? `${shown.slice(0, 20)}...` : shown} is not a number of milliseconds` };
  }
  // JSON.parse reads a 400-digit number as Infinity: the message quotes the digits.
  const problem = durationProblem(d, Number.isFinite(d) ? String(d) : (/"duration"\s*:\s*([-+\d.eE]+)/.exec(line)?.[1] ?? String(d)));
  if (problem) return { kind: 'invalid', format: 'json', reason: problem };
  const code = Number(r['response_code']);
  const str = (k: string) => (typeof r[k] === 'string' ? (r[k] as string) : '');
  const entry: LogEntry = {
    startTime: str('start_time'),
    method: str('method'),
    path: str('path'),
    protocol: str('protocol'),
    code: Number.isFinite(code) ? code : 0,
    flags: str('response_flags') || '-',
    durationMs: d,
    authority: str('authority'),
    route: dash(typeof r['route_name'] === 'string' ? (r['route_name'] as string) : null),
  };
  return { kind: 'entry', format: 'json', entry };
}

function shapeOf(line: string): SkippedShape {
  const m = PROXY_OWN_LINE.exec(line);
  if (!m) return GO_LOG_LINE.test(line) ? 'pilot-agent' : 'other';
  return m[1] ? 'envoy' : 'pilot-agent';
}

/**
 * Reads one line of a log whose format is `format`, or, while no access-log line has decided it
 * (null), of either of Istio's formats: the first access-log line decides, whatever came before.
 */
export function readLine(line: string, format: LogFormat | null): LineRead {
  const json = line.trimStart().startsWith('{');
  const read = json ? (format !== 'text' ? readJsonLine(line) : null) : format !== 'json' ? readTextLine(line) : null;
  return read ?? { kind: 'skipped', shape: json ? jsonShapeOf(line) : shapeOf(line) };
}

/** pilot-agent logging as JSON (`--log_as_json`: `{"level":…,"time":…,"msg":…}`) is its own line too. */
function jsonShapeOf(line: string): SkippedShape {
  try {
    const o = JSON.parse(line) as Record<string, unknown>;
    return o !== null && typeof o === 'object' && typeof o['level'] === 'string' && typeof o['msg'] === 'string' ? 'pilot-agent' : 'other';
  } catch {
    return 'other';
  }
}
