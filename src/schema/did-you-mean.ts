/** Edit distance (insertions, deletions, substitutions) between two short strings. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length]!;
}

/**
 * The known key a misspelt one most likely meant: same letters in another case, or at most two
 * edits away and no more than a third of the word (`intr` → `inter`).
 */
export function didYouMean(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const d = name.toLowerCase() === lower ? 0 : distance(lower, name.toLowerCase());
    if (d <= Math.min(2, Math.ceil(name.length / 3)) && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}
