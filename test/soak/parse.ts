/**
 * The failures a run of node's test runner names in its summary (the spec reporter's "failing
 * tests" blocks: `test at FILE:LINE:COL`, then `✖ NAME (DURATION)`, then the error's first line).
 */

export type NamedFailure = { file: string; test: string; assertion: string };

const TEST_AT = /^test at (.+?):\d+:\d+$/;
const FAILED = /^\u2716 (.+) \([\d.]+m?s\)$/;

/** Every failure the output's summaries name, once each (both tracks' summaries are in one output). */
export function failuresIn(lines: readonly string[]): NamedFailure[] {
  const seen = new Map<string, NamedFailure>();
  for (let i = 0; i < lines.length; i++) {
    const at = TEST_AT.exec(lines[i]!.trim());
    const failed = at && FAILED.exec(lines[i + 1]?.trim() ?? '');
    if (!at || !failed) continue;
    const assertion =
      lines
        .slice(i + 2, i + 12)
        .map((l) => l.trim())
        .find((l) => l.length > 0) ?? '';
    const file = at[1]!.replace(/^.*?dist\/test\//, 'dist/test/');
    const key = `${file}\u0000${failed[1]}`;
    if (!seen.has(key)) seen.set(key, { file, test: failed[1]!, assertion: assertion.slice(0, 300) });
  }
  return [...seen.values()];
}

/** The sample closest in time to `atMs` (samples sorted by time); 0 with none. */
export function sampleAt(samples: ReadonlyArray<{ atMs: number; value: number }>, atMs: number): number {
  let best: { atMs: number; value: number } | undefined;
  for (const s of samples) if (!best || Math.abs(s.atMs - atMs) < Math.abs(best.atMs - atMs)) best = s;
  return best?.value ?? 0;
}
