/**
 * Istio's two default Envoy access-log formats, one line at a time (istio/istio
 * pilot/pkg/model/telemetry_logging.go: `EnvoyTextLogFormat`, `EnvoyJSONLogFormatIstio`; set by
 * meshConfig `accessLogEncoding: TEXT | JSON`). Only the fields gracegate reads are taken:
 * `%START_TIME%`, method, path, protocol, response code, response flags, `%DURATION%` (ms, from the
 * first byte received to the last byte sent), authority and route name.
 */

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

export function parseTextLine(line: string): LogEntry | null {
  const m = TEXT_LINE.exec(line);
  if (!m) return null;
  return {
    startTime: m[1]!,
    method: m[2]!,
    path: m[3]!,
    protocol: m[4]!,
    code: Number(m[5]),
    flags: m[6]!,
    durationMs: Number(m[7]),
    authority: m[8]!,
    route: dash(m[9]),
  };
}

export function parseJsonLine(line: string): LogEntry | null {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (o === null || typeof o !== 'object') return null;
  // Numeric operators are numbers in Envoy's typed JSON (strings in older or hand-made formats).
  const durationMs = Number(o['duration']);
  const code = Number(o['response_code']);
  if (o['duration'] === null || o['duration'] === undefined || !Number.isFinite(durationMs) || durationMs < 0) return null;
  const str = (k: string) => (typeof o[k] === 'string' ? (o[k] as string) : '');
  return {
    startTime: str('start_time'),
    method: str('method'),
    path: str('path'),
    protocol: str('protocol'),
    code: Number.isFinite(code) ? code : 0,
    flags: str('response_flags') || '-',
    durationMs,
    authority: str('authority'),
    route: dash(typeof o['route_name'] === 'string' ? (o['route_name'] as string) : null),
  };
}

/** The format of a log from its first line, or null when it is neither of Istio's. */
export function detectFormat(line: string): LogFormat | null {
  const trimmed = line.trimStart();
  if (trimmed.startsWith('{')) return parseJsonLine(trimmed) ? 'json' : null;
  return parseTextLine(line) ? 'text' : null;
}

export function parseLine(format: LogFormat, line: string): LogEntry | null {
  return format === 'text' ? parseTextLine(line) : parseJsonLine(line);
}
