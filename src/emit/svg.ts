/**
 * SVG documents built as a tree and serialised here, every text and attribute escaped: a label
 * taken from a spec or a URL cannot break the document.
 */

export type SvgNode = { name: string; attrs: Record<string, string | number>; children: Array<SvgNode | string> };

/** One element; string children are text. */
export function el(name: string, attrs: Record<string, string | number | undefined> = {}, ...children: Array<SvgNode | string>): SvgNode {
  const kept: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) kept[k] = typeof v === 'number' ? Math.round(v * 10) / 10 : v;
  return { name, attrs: kept, children };
}

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', "'": '&apos;', '"': '&quot;' };

/** Text or an attribute value with the five XML entities in place of their characters. */
function escapeXml(text: string): string {
  return text.replace(/[&<>'"]/g, (c) => ENTITIES[c]!);
}

/**
 * An element at `indent` (a newline and two spaces a level): empty as `<name/>`; text on the
 * element's own line; each child element on a line of its own, and a text after one too; the end
 * tag on its own line when elements are inside.
 */
function serialise(node: SvgNode, indent: string): string {
  const attrs = Object.entries(node.attrs)
    .map(([k, v]) => ` ${k}="${escapeXml(String(v))}"`)
    .join('');
  const start = `${indent}<${node.name}${attrs}`;
  const inner = `${indent}  `;
  let body = '';
  let elements = 0;
  let afterElement = false;
  for (const c of node.children) {
    if (typeof c === 'string') body += `${afterElement ? inner : ''}${escapeXml(c)}`;
    else {
      body += serialise(c, inner);
      elements++;
    }
    afterElement = typeof c !== 'string';
  }
  if (body === '') return `${start}/>`;
  if (afterElement) return `${start}>${body}${indent}</${node.name}>`;
  if (elements > 0) return `${start}>${inner}${body}${indent}</${node.name}>`;
  return `${start}>${body}</${node.name}>`;
}

/** A standalone SVG document of `width` x `height` with a <title> (what screen readers and tooltips show). */
export function svgDocument(width: number, height: number, title: string, children: SvgNode[]): string {
  const root = el(
    'svg',
    { xmlns: 'http://www.w3.org/2000/svg', width, height, viewBox: `0 0 ${width} ${height}`, 'font-family': 'sans-serif', 'font-size': 11 },
    el('title', {}, title),
    ...children,
  );
  return `${serialise(root, '\n').trim()}\n`;
}
