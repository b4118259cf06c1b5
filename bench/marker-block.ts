/** A generated block of a page, found by its begin and end markers (the docs tests and the docs mains). */

/** The block of `doc` from `begin` to `end` (markers included), or undefined. */
export function blockIn(doc: string, begin: string, end: string): string | undefined {
  const start = doc.indexOf(begin);
  const stop = doc.indexOf(end);
  return start < 0 || stop < start ? undefined : doc.slice(start, stop + end.length);
}
