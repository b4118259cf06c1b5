/**
 * docs/architecture.svg: src/'s folder order (LAYERS in test/layers.test.ts) as a picture, the
 * entries on top and core at the bottom, every import pointing down. Written by
 * `node dist/test/layers-svg-main.js`; layers.test.ts fails when the committed picture differs.
 */
import { el, svgDocument, type SvgNode } from '../src/emit/svg';

type Layer = { readonly name: string; readonly folders: readonly string[]; readonly holds: string };

const WIDTH = 980;
const ROW = 56;
const TOP = 40;
const LEFT = 176;
const BOX = { width: 132, height: 24, gap: 8 };
/** The width of one character of the boxes' monospace labels, and the room beside them. */
const CHAR = 7;
const PAD = 16;
/** What one folder of a `parent/*` entry is. */
const ONE_OF: Readonly<Record<string, string>> = { lb: 'vendor', delivery: 'path' };

/** How a folder (or a file) of the order is named in the picture. */
function label(folder: string): string {
  if (folder === '.') return 'src/index.ts';
  if (folder.endsWith('.ts')) return `src/${folder}`;
  if (!folder.endsWith('/*')) return `src/${folder}/`;
  const parent = folder.slice(0, -2);
  return `src/${parent}/<${ONE_OF[parent] ?? 'folder'}>/`;
}

/** A box wide enough for its label. */
const boxWidth = (folder: string): number => Math.max(BOX.width, label(folder).length * CHAR + PAD);

export function renderLayersSvg(layers: readonly Layer[]): string {
  const nodes: SvgNode[] = [];
  const top = [...layers].reverse();
  const height = TOP + top.length * ROW + 16;
  nodes.push(
    el(
      'text',
      { x: 12, y: 22, 'font-size': 14, 'font-weight': 'bold' },
      'src/ folders, lowest at the bottom: a folder imports only from the rows below it (test/layers.test.ts)',
    ),
  );
  top.forEach((layer, i) => {
    const y = TOP + i * ROW;
    nodes.push(el('rect', { x: 8, y: y + 2, width: WIDTH - 16, height: ROW - 6, rx: 4, fill: i % 2 === 0 ? '#f4f6f8' : '#ffffff', stroke: '#d0d7de' }));
    nodes.push(el('text', { x: 20, y: y + 22, 'font-size': 12, 'font-weight': 'bold' }, `${layers.length - i}. ${layer.name}`));
    let x = LEFT;
    for (const f of layer.folders) {
      const width = boxWidth(f);
      nodes.push(el('rect', { x, y: y + 7, width, height: BOX.height, rx: 3, fill: '#ddeeff', stroke: '#4a78a8' }));
      nodes.push(el('text', { x: x + width / 2, y: y + 23, 'text-anchor': 'middle', 'font-family': 'monospace' }, label(f)));
      x += width + BOX.gap;
    }
    if (layer.folders.length > 1 || layer.folders.some((f) => f.endsWith('/*'))) {
      nodes.push(el('text', { x: x + 4, y: y + 23, fill: '#6e7781' }, 'side by side: none imports another'));
    }
    nodes.push(el('text', { x: LEFT, y: y + 44, fill: '#3d444d' }, layer.holds));
  });
  return svgDocument(WIDTH, height, 'gracegate: the order of src/ folders', nodes);
}
