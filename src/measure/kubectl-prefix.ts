/**
 * What `kubectl logs` puts before each line of a container's log when asked, so that measure reads
 * logs as users save them:
 * - `--prefix`: `[pod/<pod>/<container>] ` (kubectl's `logs.go`, one source among several pods
 *   with `-l` or `deploy/`);
 * - `--timestamps`: the kubelet's RFC 3339 time with nanoseconds and a space,
 *   `2026-12-06T10:00:00.123456789Z `, after the prefix when both are given.
 * Istio's own text access-log line starts `[<start time>]` and pilot-agent's `<time>\t`, so neither
 * is taken for one of these.
 */

const PREFIX = /^\[[a-z][\w.-]*\/[^\s/\]]+\/[^\s/\]]+\] /;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d) /;

export type KubectlPrefixes = { prefix: number; timestamps: number };

/** The line without kubectl's prefixes, counting each one it removes in `seen`. */
export function withoutKubectlPrefixes(line: string, seen: KubectlPrefixes): string {
  let rest = line;
  const prefix = PREFIX.exec(rest);
  if (prefix) {
    seen.prefix++;
    rest = rest.slice(prefix[0].length);
  }
  const time = TIMESTAMP.exec(rest);
  if (time) {
    seen.timestamps++;
    rest = rest.slice(time[0].length);
  }
  return rest;
}

/** The note measure prints when it stripped prefixes, or undefined when it stripped none. */
export function kubectlPrefixNote(seen: KubectlPrefixes): string | undefined {
  const parts = [
    ...(seen.prefix > 0 ? [`--prefix's [pod/NAME/CONTAINER] from ${seen.prefix} line(s)`] : []),
    ...(seen.timestamps > 0 ? [`--timestamps' time from ${seen.timestamps} line(s)`] : []),
  ];
  return parts.length > 0 ? `read as kubectl logs output: stripped ${parts.join(' and ')}` : undefined;
}
