/**
 * The servers' shared frame (src/hc/http-limits.ts) under requests that make a handler throw: the
 * process must keep serving (issue 18, attack 1: a RangeError in an answer took the sidecar down).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createControlServer } from '../../src/hc/control-server';
import { closeServer, createBoundedServer, listen } from '../../src/hc/http-limits';
import type { HcMachine } from '../../src/hc/machine';
import { request } from '../support/http';

describe('a handler that throws', () => {
  test('is answered 500 and the server keeps serving', async () => {
    let calls = 0;
    const server = createBoundedServer({ total: 8, perSource: 8 }, () => {
      calls++;
      throw new RangeError('Invalid time value');
    });
    const port = await listen(server, 0, '127.0.0.1');
    try {
      for (let i = 0; i < 2; i++) {
        const r = await request(`http://127.0.0.1:${port}/health`);
        assert.equal(r.status, 500);
        assert.match(r.body, /Invalid time value/);
      }
      assert.equal(calls, 2);
    } finally {
      await closeServer(server);
    }
  });

  test('a control route that throws synchronously is a 500 JSON answer', async () => {
    const machine = {
      snapshot: () => {
        throw new RangeError('Invalid time value');
      },
    } as unknown as HcMachine;
    const server = createControlServer(machine);
    const port = await listen(server, 0, '127.0.0.1');
    try {
      const r = await request(`http://127.0.0.1:${port}/state`);
      assert.equal(r.status, 500);
      assert.deepEqual(JSON.parse(r.body), { error: 'Invalid time value' });
    } finally {
      await closeServer(server);
    }
  });
});
