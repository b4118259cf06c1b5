/**
 * Word wrapping for text meant for a terminal: a line longer than `width` breaks at spaces, and its
 * continuation lines start at `indent` (a hanging indent, so a wrapped finding or note stays under
 * its own first word). The spaces inside a line (aligned columns) are kept; a word longer than the
 * room is left whole rather than cut.
 */
export function wrapLine(line: string, width: number, indent: number): string[] {
  if (line.length <= width) return [line];
  const lead = /^ */.exec(line)![0];
  const tokens = line.slice(lead.length).match(/\S+\s*/g) ?? [];
  const out: string[] = [];
  let current = lead;
  let empty = true;
  for (const token of tokens) {
    if (!empty && (current + token.trimEnd()).length > width) {
      out.push(current.trimEnd());
      current = ' '.repeat(indent);
      empty = true;
    }
    current += token;
    empty = false;
  }
  out.push(current.trimEnd());
  return out;
}

/** The width to wrap at: the terminal's, else COLUMNS, else 100; never below 60 or above 200. */
export function textWidth(stream: { isTTY?: boolean; columns?: number }, env: NodeJS.ProcessEnv = process.env): number {
  const asked = stream.isTTY && stream.columns ? stream.columns : Number(env['COLUMNS']) || 100;
  return Math.min(200, Math.max(60, asked));
}
