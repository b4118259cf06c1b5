import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sseParser } from '../../support/sse-client';

// The SSE client's parser against the WHATWG HTML standard's event-stream rules (section 9.2.6).
test('the SSE parser follows the WHATWG event-stream rules', () => {
  const p = sseParser();
  assert.deepEqual(
    p.push('\uFEFFdata: a\r\ndata:b\n\n'),
    [{ type: 'message', data: 'a\nb', lastEventId: '' }],
    'BOM skipped, CRLF and LF, one space removed, data joined by LF',
  );
  assert.deepEqual(
    p.push(': comment\nevent: tick\nid: 7\nretry: 1x\ndata\n\n'),
    [{ type: 'tick', data: '', lastEventId: '7' }],
    'a comment is skipped; `data` with no colon adds an empty line, so the event dispatches with data ""',
  );
  assert.equal(p.retry(), undefined, 'retry with a non-digit is ignored');
  assert.deepEqual(p.push('id: 8\rdata: x\r'), [], 'CR ends a line; no blank line yet');
  assert.deepEqual(p.push('\n'), [], 'the LF after a chunk-final CR is part of the same line end');
  assert.deepEqual(p.push('\r'), [{ type: 'message', data: 'x', lastEventId: '8' }], 'the blank line dispatches; the last event ID persists');
  assert.deepEqual(p.push('id: a\u0000b\nretry: 3000\ndata: y\n\n'), [{ type: 'message', data: 'y', lastEventId: '8' }], 'an id with NUL is ignored');
  assert.equal(p.retry(), 3000);
});
