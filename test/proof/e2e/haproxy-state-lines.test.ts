import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Haproxy, parseStateLine } from '../harness/haproxy';
import { waitFor } from '../harness/proc';

// The LB's state changes are judged on HAProxy's own clock (harness/haproxy.ts): the stamped copy
// of each line makes the event, the unstamped foreground copy none.

test("a stamped state line gives HAProxy's own time; the foreground copy without a stamp gives nothing", () => {
  const stamped =
    '2026-12-05T00:22:57.564171+00:00 Server gateway/gw-1 is stopping, reason: Layer7 check conditionally passed, code: 404, check duration: 0ms. 0 active and 0 backup servers online. 0 sessions requeued, 0 total in queue.';
  assert.deepEqual(parseStateLine(stamped), {
    atMs: Date.UTC(2026, 11, 5, 0, 22, 57, 564),
    backend: 'gateway',
    server: 'gw-1',
    state: 'NOLB',
    sessionsActive: 0,
  });
  const down = parseStateLine(
    '2026-12-05T01:22:47.559257+01:00 Server gateway/gw-2 is DOWN, reason: Layer4 connection problem, info: "Connection refused", check duration: 0ms. 1 active and 0 backup servers left. 3 sessions active, 0 requeued, 0 remaining in queue.',
  );
  assert.equal(down?.atMs, Date.UTC(2026, 11, 5, 0, 22, 47, 559), 'the offset is honoured');
  assert.equal(down?.state, 'DOWN');
  assert.equal(down?.sessionsActive, 3);
  assert.equal(
    parseStateLine('[WARNING]  (24144) : Server gateway/gw-2 is DOWN, reason: Layer4 connection problem, check duration: 0ms. 0 sessions active'),
    null,
  );
  assert.equal(parseStateLine('2026-12-05T00:22:57.564180+00:00 backend gateway has no server available!'), null);
});

test('the real HAProxy: one DOWN event when its server goes away, stamped by HAProxy no later than the harness read it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gracegate-state-lines-'));
  const server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const lb = await Haproxy.start(
    dir,
    ['backend gateway', '    option httpchk GET /', `    server gw-1 127.0.0.1:${port} check inter 100 fall 1 rise 1`].join('\n') + '\n',
    'gateway',
  );
  try {
    // Up first (the server answers), so the change comes after the harness listens.
    await waitFor('HAProxy to check gw-1', 10_000, async () => ((await lb.stats()).servers.some((s) => /^UP/.test(s.status)) ? true : undefined));
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await waitFor('HAProxy to mark gw-1 DOWN', 10_000, () => (lb.events.some((e) => e.state === 'DOWN') ? true : undefined));
    const down = lb.events.filter((e) => e.server === 'gw-1');
    assert.equal(down.length, 1, `one event for the one change, not one a copy: ${JSON.stringify(down)}`);
    const received = lb.proc.output.find((l) => l.text === down[0]!.line);
    assert.ok(received, 'the event is a line HAProxy printed');
    assert.equal(down[0]!.atMs, Date.parse(down[0]!.line.split(' ')[0]!), "the event's time is the line's own stamp");
    assert.ok(down[0]!.atMs <= received!.atMs, `HAProxy's time ${down[0]!.atMs} is not after the harness read the line (${received!.atMs})`);
  } finally {
    await lb.stop();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
