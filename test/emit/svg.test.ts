/** The SVG serialiser: any text or attribute value, however hostile, comes back from a real XML parser as it went in. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { el, svgDocument } from '../../src/emit/svg';

const HOSTILE = ['</text><script>alert(1)</script>', `" onload="x`, "' onload='x", 'a & b &amp; c', '<![CDATA[x]]>', '<!-- -->', 'é ✓ ≤ 5 s'];

test('texts and attribute values are escaped: the document parses, and each value reads back unchanged', () => {
  for (const value of HOSTILE) {
    const svg = svgDocument(10, 10, value, [el('text', { x: 1, 'data-label': value }, value)]);
    assert.equal(XMLValidator.validate(svg), true, svg);
    const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', processEntities: true, htmlEntities: false, trimValues: false }).parse(
      svg,
    ) as {
      svg: { title: string; text: { '#text': string; '@_data-label': string } };
    };
    assert.deepEqual([parsed.svg.title, parsed.svg.text['#text'], parsed.svg.text['@_data-label']], [value, value, value]);
  }
});

test('layout: an empty element closes itself, text stays on its line, child elements go one a line (a tooltip under its label), two spaces a level', () => {
  const svg = svgDocument(4, 2, 't', [
    el('g', { id: 'a' }, el('rect', { width: 1.26 }), el('text', {}, 'x', 'y')),
    el('g', {}, ''),
    el('text', { y: 2 }, 'label', el('title', {}, 'tip')),
  ]);
  assert.equal(
    svg,
    [
      '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="2" viewBox="0 0 4 2" font-family="sans-serif" font-size="11">',
      '  <title>t</title>',
      '  <g id="a">',
      '    <rect width="1.3"/>',
      '    <text>xy</text>',
      '  </g>',
      '  <g/>',
      '  <text y="2">label',
      '    <title>tip</title>',
      '  </text>',
      '</svg>',
      '',
    ].join('\n'),
  );
});
