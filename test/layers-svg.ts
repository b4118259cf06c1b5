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

/** How a folder of the order is named in the picture. */
function label(folder: string): string {
  if (folder === '.') return 'src/index.ts';
  return folder.endsWith('/*') ? `src/${folder.slice(0, -2)}/<vendor>/` : `src/${folder}/`;
}

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
    layer.folders.forEach((f, j) => {
      const x = LEFT + j * (BOX.width + BOX.gap);
      nodes.push(el('rect', { x, y: y + 7, width: BOX.width, height: BOX.height, rx: 3, fill: '#ddeeff', stroke: '#4a78a8' }));
      nodes.push(el('text', { x: x + BOX.width / 2, y: y + 23, 'text-anchor': 'middle', 'font-family': 'monospace' }, label(f)));
    });
    if (layer.folders.length > 1 || layer.folders.some((f) => f.endsWith('/*'))) {
      const x = LEFT + layer.folders.length * (BOX.width + BOX.gap) + 4;
      nodes.push(el('text', { x, y: y + 23, fill: '#6e7781' }, 'side by side: none imports another'));
    }
    nodes.push(el('text', { x: LEFT, y: y + 44, fill: '#3d444d' }, layer.holds));
  });
  return svgDocument(WIDTH, height, 'gracegate: the order of src/ folders', nodes);
}
