import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as http from 'node:http';
import { finished } from 'node:stream/promises';
import WebSocket from 'ws';
import { openSse } from '../../support/sse-client';
import { startTestUpstream, UPSTREAM_PORT_HEADER } from '../../support/test-upstream';

// The upstream app's numbered feed (test/support/test-upstream.ts), what the end-to-end
// long-lived clients read: message n is due at t0 + n x interval; a connection starts at `from`
// (SSE: Last-Event-ID + 1), sends what is already due at once, and names the app that served it.

test('WebSocket feed: resumes at `from`, catches up at once, then one message per interval; says which app served it', async () => {
  const app = await startTestUpstream();
  try {
    const t0 = Date.now() - 1000; // 10 messages (0-9) due already
    const ws = new WebSocket(`ws://127.0.0.1:${app.port}/ws?t0=${t0}&from=4&intervalMs=100`);
    const header = new Promise<string | string[] | undefined>((resolve) =>
      ws.once('upgrade', (res: http.IncomingMessage) => resolve(res.headers[UPSTREAM_PORT_HEADER])),
    );
    const got: number[] = [];
    ws.on('message', (d) => got.push(Number(d.toString())));
    await new Promise((r) => setTimeout(r, 350));
    ws.terminate();
    assert.equal(await header, String(app.port));
    assert.deepEqual(got.slice(0, 6), [4, 5, 6, 7, 8, 9], 'the catch-up from `from`');
    assert.ok(got.length >= 8 && got.length <= 11, `then one every 100 ms (${got.length} in 350 ms)`);
    assert.deepEqual(
      got,
      got.map((_, i) => 4 + i),
      'in order, no gap',
    );
  } finally {
    await app.close();
  }
});

test('SSE feed: Last-Event-ID resumes after the last event; without t0 /sse and /ws behave as before', async () => {
  const app = await startTestUpstream();
  try {
    const t0 = Date.now() - 500;
    const ids: number[] = [];
    const conn = openSse(`http://127.0.0.1:${app.port}/sse?t0=${t0}&from=0&intervalMs=100&events=3`, (e) => ids.push(Number(e.lastEventId)), {
      lastEventId: '1',
    });
    const res = await conn.response;
    assert.equal(res.headers[UPSTREAM_PORT_HEADER], String(app.port));
    await finished(res);
    assert.deepEqual(ids, [2, 3, 4]);
    // The old behaviour: ids from 0, no header; the WebSocket echoes.
    const plain: number[] = [];
    const old = openSse(`http://127.0.0.1:${app.port}/sse?events=2&intervalMs=10`, (e) => plain.push(Number(e.lastEventId)));
    const oldRes = await old.response;
    await finished(oldRes);
    assert.deepEqual(plain, [0, 1]);
    assert.equal(oldRes.headers[UPSTREAM_PORT_HEADER], undefined);
    const ws = new WebSocket(`ws://127.0.0.1:${app.port}/ws`);
    await new Promise((r) => ws.once('open', r));
    ws.send('hello');
    const echo = await new Promise<string>((r) => ws.once('message', (d) => r(d.toString())));
    ws.terminate();
    assert.equal(echo, 'hello');
  } finally {
    await app.close();
  }
});
