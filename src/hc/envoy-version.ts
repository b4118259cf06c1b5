/**
 * Which Envoy the sidecar talks to, and which admin calls drain it. Envoy's `/server_info` version
 * reads `<sha>/<x.y.z>[-suffix]/<Clean|Modified>/<RELEASE|DEBUG>/<ssl>`; the table below maps a
 * version to the drain calls and says what that version does with them (docs/envoy.md has the
 * measurements). Pure: no I/O.
 */

export interface EnvoyVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
}

/** How a row's behaviour is known. */
export type DrainBasis = 'measured' | 'fallback';

export interface DrainProfile {
  /** The admin paths POSTed, in order, each expecting 200. */
  readonly calls: readonly string[];
  readonly basis: DrainBasis;
  /** What these calls do on this version, and why they were chosen. */
  readonly why: string;
}

export const GRACEFUL = '/drain_listeners?graceful';
export const PLAIN = '/drain_listeners';

/**
 * The plain call stops the listeners (new connects refused); `graceful` then starts the drain
 * sequence (HTTP/1 responses get `Connection: close`, HTTP/2 a GOAWAY). This order, not graceful
 * first: told to close first, keep-alive clients reconnect while the workers are still closing
 * their listen sockets, and a connection queued on a closing socket is reset after the client sent
 * its request (bench/envoy-drain-order.ts; its recorded run is docs/envoy.md's block: plain first
 * never reset more, and on 1.36.4 none, while on 1.40.0, whose plain call also tells connections to
 * close, a loaded machine saw resets after either order). Both
 * calls are needed before 1.40: plain alone tells no connection to close, graceful alone keeps
 * accepting for `--drain-time-s`.
 */
const PLAIN_THEN_GRACEFUL = [PLAIN, GRACEFUL] as const;

interface Row {
  /** Inclusive lower bound. */
  readonly from: EnvoyVersion;
  readonly profile: DrainProfile;
}

/** Newest first; the first row whose `from` is not above the version applies. */
const TABLE: readonly Row[] = [
  {
    from: { major: 1, minor: 40, patch: 0 },
    profile: {
      calls: PLAIN_THEN_GRACEFUL,
      basis: 'measured',
      why: 'measured on 1.40.0: plain stops the listeners and tells connections to close (envoy PR #47042); graceful after it is a no-op, kept for when the runtime guard non_graceful_drain_notifies_connections is off (then it starts the drain)',
    },
  },
  {
    from: { major: 1, minor: 16, patch: 0 },
    profile: {
      calls: PLAIN_THEN_GRACEFUL,
      basis: 'measured',
      why: 'measured on 1.36.4 (Istio 1.27 ships 1.35): plain stops the listeners without telling any connection, graceful then starts the drain (Connection: close, GOAWAY)',
    },
  },
];

const FALLBACK_WHY = 'the calls measured on Envoy 1.36 and 1.40 (plain stops the listeners, graceful starts the drain); not measured on this version';

/**
 * `/stats?type=Gauges` (envoy PR #19546, Envoy 1.22): Envoy then skips every counter and histogram
 * before matching the filter; on a 21,000-stat Envoy that cut its CPU per poll to a third
 * (bench/envoy-bench.ts). Everything the sidecar counts is a gauge. Older or unknown versions get
 * the plain filtered query (the same stats, more work for Envoy).
 */
export function statsGaugesOnly(version: EnvoyVersion | null): boolean {
  return version !== null && atLeast(version, { major: 1, minor: 22, patch: 0 });
}

/** `x.y.z` from a `/server_info` version string; null when it has none. */
export function parseEnvoyVersion(versionString: string): EnvoyVersion | null {
  const m = /^[^/]*\/(\d+)\.(\d+)\.(\d+)(?:[-+][^/]*)?(?:\/|$)/.exec(versionString.trim());
  if (!m) return null;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) };
}

export function formatVersion(v: EnvoyVersion): string {
  return `${v.major}.${v.minor}.${v.patch}`;
}

function atLeast(v: EnvoyVersion, from: EnvoyVersion): boolean {
  if (v.major !== from.major) return v.major > from.major;
  if (v.minor !== from.minor) return v.minor > from.minor;
  return v.patch >= from.patch;
}

/**
 * The drain calls for a version. Unknown (null) and versions older than 1.16 (before
 * `drain_listeners?graceful`) get the same calls as the newest measured row, marked 'fallback':
 * they are the calls that worked on every version measured, and a sidecar that refused to drain
 * would be worse than one that drains as on 1.36.
 */
export function drainProfileFor(version: EnvoyVersion | null): DrainProfile {
  if (version !== null) {
    const row = TABLE.find((r) => atLeast(version, r.from));
    if (row) return row.profile;
    return {
      calls: PLAIN_THEN_GRACEFUL,
      basis: 'fallback',
      why: `Envoy ${formatVersion(version)} is older than 1.16 (no drain_listeners?graceful): ${FALLBACK_WHY}`,
    };
  }
  return { calls: PLAIN_THEN_GRACEFUL, basis: 'fallback', why: `version unknown: ${FALLBACK_WHY}` };
}
