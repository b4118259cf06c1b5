/**
 * SVG documents built as a tree and serialised by fast-xml-parser's XMLBuilder, which escapes
 * every text and attribute: a label taken from a spec or a URL cannot break the document.
 */
import { XMLBuilder } from 'fast-xml-parser';

export type SvgNode = { name: string; attrs: Record<string, string | number>; children: Array<SvgNode | string> };

/** One element; string children are text. */
export function el(name: string, attrs: Record<string, string | number | undefined> = {}, ...children: Array<SvgNode | string>): SvgNode {
  const kept: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) kept[k] = typeof v === 'number' ? Math.round(v * 10) / 10 : v;
  return { name, attrs: kept, children };
}

type Ordered = Record<string, unknown>;

function toOrdered(node: SvgNode | string): Ordered {
  if (typeof node === 'string') return { '#text': node };
  const attrs = Object.fromEntries(Object.entries(node.attrs).map(([k, v]) => [`@_${k}`, String(v)]));
  return { [node.name]: node.children.map(toOrdered), ...(Object.keys(attrs).length > 0 ? { ':@': attrs } : {}) };
}

const builder = new XMLBuilder({ preserveOrder: true, ignoreAttributes: false, attributeNamePrefix: '@_', format: true, suppressEmptyNode: true });

/** A standalone SVG document of `width` x `height` with a <title> (what screen readers and tooltips show). */
export function svgDocument(width: number, height: number, title: string, children: SvgNode[]): string {
  const root = el(
    'svg',
    { xmlns: 'http://www.w3.org/2000/svg', width, height, viewBox: `0 0 ${width} ${height}`, 'font-family': 'sans-serif', 'font-size': 11 },
    el('title', {}, title),
    ...children,
  );
  return `${(builder.build([toOrdered(root)]) as string).trim()}\n`;
}
