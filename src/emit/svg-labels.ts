/*
 * Labels of vertical marks on a time axis (events, commands), placed in rows so that no label sits
 * on another and no mark's line runs through a label. Each mark's line runs from a band's edge to
 * its own label's row ('up': from the top edge down to its row; 'down': from its row down to the
 * bottom edge), so a label must sit past the end of every line it spans: below the rows of the
 * marks under it for 'up', above them for 'down'. Each mark is placed after the marks it must sit
 * below, in the lowest row that is free there. A picture test in Chromium (test/pictures.test.ts) holds the result to the live
 * layout, since the widths here are estimates.
 */

/** Roughly the width of `text` at `fontSize` px in a sans-serif font (DejaVu Sans, the widest one met, averages under 0.57 em). */
export function labelWidth(text: string, fontSize = 11): number {
  return text.length * fontSize * 0.58;
}

export type Mark = { x: number; label: string };
/** A label's row and side, its box, and its text as drawn: shortened with '…' only where no row could keep it clear of a line. */
export type PlacedLabel = { row: number; anchor: 'start' | 'end'; x0: number; x1: number; text: string };

/** Gap between a mark's line and its label, and between two labels in a row. */
const PAD = 3;
const GAP = 6;

/**
 * Rows for the labels of `marks`: a label goes after its line when it fits before `maxX`, else
 * before it. Returns one placement per mark, in the marks' order.
 */
export function placeMarkLabels(marks: readonly Mark[], direction: 'up' | 'down', maxX: number, fontSize = 11, minX = 0): PlacedLabel[] {
  const texts = marks.map((m) => m.label);
  const widths = marks.map((m) => labelWidth(m.label, fontSize));
  const charWidth = labelWidth('x', fontSize);
  const shorten = (i: number, room: number) => {
    texts[i] = `${texts[i]!.slice(0, Math.max(1, Math.floor(room / charWidth) - 1)).trimEnd()}…`;
    widths[i] = labelWidth(texts[i]!, fontSize);
  };
  // A label longer than the room on either side of its line is cut to the larger room.
  marks.forEach((m, i) => {
    const after = maxX - m.x - PAD;
    const before = m.x - PAD - minX;
    if (widths[i]! > Math.max(after, before)) shorten(i, Math.max(after, before));
  });
  const boxOf = (i: number, anchor: PlacedLabel['anchor']) => {
    const { x } = marks[i]!;
    return anchor === 'start' ? { anchor, x0: x + PAD, x1: x + PAD + widths[i]! } : { anchor, x0: x - PAD - widths[i]!, x1: x - PAD };
  };
  // Labels go after their lines from the left, before them from the first mark whose label would
  // run past maxX on: one side within a run, so that no two labels cover each other's lines. The
  // turn moves left while a label before it and one after it would still cover each other.
  const byX = marks.map((_, i) => i).sort((a, b) => marks[a]!.x - marks[b]!.x);
  let turn = byX.findIndex((i) => marks[i]!.x + PAD + widths[i]! > maxX);
  if (turn < 0) turn = byX.length;
  const anchored = () => byX.map((i, k) => [i, boxOf(i, k < turn ? 'start' : 'end')] as const);
  let boxes = marks.map((_, i) => boxOf(i, 'start'));
  for (;;) {
    boxes = [...anchored()].sort((a, b) => a[0] - b[0]).map(([, b]) => b);
    const mutual = byX.slice(0, turn).some((s) => byX.slice(turn).some((e) => covers(s, marks[e]!.x) && covers(e, marks[s]!.x)));
    if (!mutual || turn === 0 || boxOf(byX[turn - 1]!, 'end').x0 < minX) break;
    turn--;
  }
  // Where two labels still cover each other's lines, the one after its line is cut short of the other's line.
  for (const sIdx of byX.slice(0, turn)) {
    for (const e of byX.slice(turn)) {
      if (!(covers(sIdx, marks[e]!.x) && covers(e, marks[sIdx]!.x))) continue;
      shorten(sIdx, marks[e]!.x - 2 - boxes[sIdx]!.x0);
      boxes[sIdx] = boxOf(sIdx, 'start');
    }
  }
  function covers(i: number, x: number): boolean {
    return boxes[i]!.x0 - 1 <= x && x <= boxes[i]!.x1 + 1;
  }
  const clash = (i: number, j: number) => boxes[j]!.x0 - GAP < boxes[i]!.x1 && boxes[i]!.x0 < boxes[j]!.x1 + GAP;
  // The marks whose rows must be above a mark's own: 'up', the lines its label covers; 'down', the labels that cover its line.
  const below = marks.map((_, k) => marks.map((_, m) => m).filter((m) => m !== k && (direction === 'up' ? covers(k, marks[m]!.x) : covers(m, marks[k]!.x))));
  const rows = new Array<number>(marks.length).fill(-1);
  for (let n = 0; n < marks.length; n++) {
    // Each mark after those it must be below; where two cover each other, the leftmost goes first (and the picture test names the crossing).
    const open = byX.filter((k) => rows[k] === -1);
    const k = open.find((c) => below[c]!.every((m) => rows[m]! >= 0)) ?? open[0]!;
    let row = Math.max(0, ...below[k]!.filter((m) => rows[m]! >= 0).map((m) => rows[m]! + 1));
    while (rows.some((r, j) => r === row && clash(k, j))) row++;
    rows[k] = row;
  }
  return boxes.map((b, i) => ({ ...b, row: rows[i]!, text: texts[i]! }));
}
