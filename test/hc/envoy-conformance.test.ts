/**
 * Conformance: the same assertions against the stand-in and each pinned real Envoy, so the stand-in
 * can never again be the only witness of a behaviour, and a change to it that disagrees with Envoy
 * fails here. What is asserted is what the hc sidecar builds on (docs/envoy.md has the numbers):
 * the stats it counts, the effect of every drain_listeners call, what the drain does (and does not
 * do) to idle keep-alive connections, `Connection: close` on HTTP/1 and GOAWAY on HTTP/2.
 */
import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { describe, test } from 'node:test';
import { DEFAULT_COUNTING_EXCLUDE, DEFAULT_COUNTING_INCLUDE } from '../../src/contract/hc-config';
import { CONFIG_STATS, CONFIG_STATS_PATH, configServedFrom } from '../../src/hc/envoy-admin';
import { compileCounting, countingBasis, parseStatsText } from '../../src/hc/envoy-stats';
import { parseEnvoyVersion, formatVersion } from '../../src/hc/envoy-version';
import { request } from '../support/http';
import { sleep, waitFor } from '../support/wait';
import { conformanceTargets, newConnection, takesNewConnections, type ProxyTarget, type ProxyTargetOptions } from './proxy-targets';

const L = 'listener.0.0.0.0_8080.downstream_cx_active';
const H_CX = 'http.outbound_0.0.0.0_8080.downstream_cx_active';
const H_RQ = 'http.outbound_0.0.0.0_8080.downstream_rq_active';
const HCM_DRAIN_MS = 300;

/** An HTTP/1.1 keep-alive connection on a raw socket: every response header and the close are seen. */
class H1 {
  readonly socket: net.Socket;
  closedAt: number | null = null;
  private buf = '';
  private waiters: ((r: { status: number; close: boolean }) => void)[] = [];
  private constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('data', (d: Buffer) => this.onData(d.toString('latin1')));
    this.socket.on('close', () => (this.closedAt = Date.now()));
    this.socket.on('error', () => {});
  }
  static async open(port: number): Promise<H1> {
    const c = new H1(port);
    await new Promise<void>((resolve, reject) => {
      c.socket.once('connect', resolve);
      c.socket.once('error', reject);
    });
    return c;
  }
  private onData(text: string) {
    this.buf += text;
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = this.buf.slice(0, end);
      const chunked = /transfer-encoding: chunked/i.test(head);
      let bodyEnd: number;
      if (chunked) {
        const last = this.buf.indexOf('\r\n0\r\n\r\n', end);
        if (last < 0) return;
        bodyEnd = last + 7;
      } else {
        bodyEnd = end + 4 + Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (this.buf.length < bodyEnd) return;
      }
      this.buf = this.buf.slice(bodyEnd);
      this.waiters.shift()?.({ status: Number(head.split(' ')[1]), close: /\r\nconnection: close/i.test(head) });
    }
  }
  /** One request; resolves with the status and whether the response said `Connection: close`. */
  get(path: string): Promise<{ status: number; close: boolean }> {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.socket.write(`GET ${path} HTTP/1.1\r\nHost: gateway\r\n\r\n`);
    });
  }
  /** Acts on `Connection: close` as a well-behaved client does. */
  close(): void {
    this.socket.destroy();
  }
}

class H2 {
  readonly session: http2.ClientHttp2Session;
  goaways: { at: number; code: number; lastStreamID: number }[] = [];
  closedAt: number | null = null;
  constructor(url: string) {
    this.session = http2.connect(url);
    this.session.on('goaway', (code, lastStreamID) => this.goaways.push({ at: Date.now(), code, lastStreamID }));
    this.session.on('close', () => (this.closedAt = Date.now()));
    this.session.on('error', () => {});
  }
  get(path: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const s = this.session.request({ ':path': path });
      let status = 0;
      s.on('response', (h) => (status = Number(h[':status'])));
      s.resume();
      s.on('end', () => resolve(status));
      s.on('error', reject);
      s.end();
    });
  }
}

async function withTarget(
  start: (o?: ProxyTargetOptions) => Promise<ProxyTarget>,
  options: ProxyTargetOptions,
  body: (t: ProxyTarget) => Promise<void>,
): Promise<void> {
  const t = await start({ hcmDrainTimeoutMs: HCM_DRAIN_MS, ...options });
  try {
    await body(t);
  } finally {
    await t.stop();
  }
}

const post = (t: ProxyTarget, path: string) => request(`${t.adminUrl}${path}`, { method: 'POST' });
const atLeast140 = (version: string) => {
  const v = parseEnvoyVersion(`x/${version}/`);
  return v !== null && (v.major > 1 || v.minor >= 40);
};

interface DrainCase {
  readonly calls: readonly string[];
  /** Expected: answers of the calls, new connections accepted right after, busy response told to close. */
  readonly status: readonly number[];
  readonly accepts: boolean;
  readonly notifies: boolean;
  readonly guardOff?: true;
}

/** The effect of each call (and the pairs that matter) on a version, as measured (docs/envoy.md). */
function drainCases(version: string): DrainCase[] {
  const v140 = atLeast140(version);
  const cases: DrainCase[] = [
    { calls: ['?graceful'], status: [200], accepts: true, notifies: true },
    { calls: ['?graceful&skip_exit'], status: [200], accepts: true, notifies: true },
    { calls: [''], status: [200], accepts: false, notifies: v140 },
    { calls: ['?skip_exit'], status: [v140 ? 200 : 400], accepts: true, notifies: v140 },
    { calls: ['?inboundonly'], status: [200], accepts: true, notifies: false },
    { calls: ['?graceful&inboundonly'], status: [200], accepts: true, notifies: false },
    { calls: ['?graceful', ''], status: [200, 200], accepts: false, notifies: true },
    { calls: ['', '?graceful'], status: [200, 200], accepts: false, notifies: true },
  ];
  if (v140) {
    cases.push({ calls: [''], status: [200], accepts: false, notifies: false, guardOff: true });
    cases.push({ calls: ['?graceful', ''], status: [200, 200], accepts: false, notifies: true, guardOff: true });
  }
  return cases;
}

// The targets run side by side, their tests one after the other (each test starts its own proxy).
describe('conformance', { concurrency: 4 }, () => {
  for (const target of conformanceTargets()) {
    describe(`conformance: ${target.label}`, { concurrency: 1 }, () => {
      test('the stats the sidecar counts: names, values, the traps, and requests counted instead of idle connections', async () => {
        await withTarget(target.start, {}, async (t) => {
          const idle = await H1.open(t.trafficPort);
          await idle.get('/');
          const busy = await H1.open(t.trafficPort);
          const slow = busy.get('/slow?ms=600');
          await waitFor('the slow request in flight', 5_000, () => t.requestsInFlight() === 1);
          const stats = await t.stats();
          assert.equal(stats.get(L), 2, 'one idle and one busy connection');
          assert.equal(stats.get(H_CX), 2, "the HCM's connections are the listener's");
          assert.equal(stats.get(H_RQ), 1, 'one request');
          const workers = [...stats].filter(([n]) => /^listener\.0\.0\.0\.0_8080\.worker_\d+\.downstream_cx_active$/.test(n));
          assert.equal(workers.length, 2, 'two workers, per-worker copies');
          assert.equal(
            workers.reduce((sum, [, v]) => sum + v, 0),
            2,
            'the copies add up to the listener total (so summing both double-counts)',
          );
          assert.equal(stats.get('cluster.xds-grpc.upstream_rq_active'), 1, 'the xds-grpc trap');
          for (const name of [
            'listener.0.0.0.0_15021.downstream_cx_active',
            'listener.0.0.0.0_15090.downstream_cx_active',
            'listener.admin.downstream_cx_active',
            'http.admin.downstream_rq_active',
          ]) {
            assert.ok(stats.has(name), name);
          }
          assert.ok(stats.get('http.admin.downstream_rq_active')! >= 1, 'the stats request counts itself');
          const counter = compileCounting({ include: DEFAULT_COUNTING_INCLUDE, exclude: DEFAULT_COUNTING_EXCLUDE });
          const text = await request(`${t.adminUrl}/stats?filter=${encodeURIComponent(counter.filter)}`);
          const count = counter.count(parseStatsText(text.body));
          assert.deepEqual(
            [count.total, count.requests, count.otherConnections, countingBasis(count)],
            [1, 1, 0, 'requests'],
            'the idle connection is not in flight',
          );
          const gauges = await request(`${t.adminUrl}/stats?filter=${encodeURIComponent(counter.filter)}&type=Gauges`);
          assert.equal(gauges.body, text.body, "type=Gauges (the sidecar's query) leaves every stat it counts");
          assert.doesNotMatch(
            (await request(`${t.adminUrl}/stats?type=Gauges&filter=downstream_cx_total`)).body,
            /downstream_cx_total/,
            'and drops the counters',
          );
          await slow;
          idle.close();
          busy.close();
        });
      });

      test("Istio's default stats matcher: no downstream_rq_active, so the count falls back to connections", async () => {
        await withTarget(target.start, { requestStats: false }, async (t) => {
          const idle = await H1.open(t.trafficPort);
          await idle.get('/');
          const stats = await t.stats();
          assert.equal(stats.get(H_CX), 1);
          assert.equal(stats.has(H_RQ), false);
          assert.equal(stats.has('http.admin.downstream_rq_active'), false);
          const counter = compileCounting({ include: DEFAULT_COUNTING_INCLUDE, exclude: DEFAULT_COUNTING_EXCLUDE });
          const count = counter.count(parseStatsText((await request(`${t.adminUrl}/stats?filter=${encodeURIComponent(counter.filter)}`)).body));
          assert.deepEqual([count.total, countingBasis(count)], [1, 'connections']);
          idle.close();
        });
      });

      for (const c of drainCases(target.version)) {
        const name = c.calls.map((q) => `drain_listeners${q}`).join(' then ') + (c.guardOff ? ' (runtime guard off)' : '');
        test(`${name}: answers ${c.status.join(', ')}; new connects ${c.accepts ? 'accepted' : 'refused'}; a busy connection ${c.notifies ? 'is' : 'is not'} told to close; an idle one stays open`, async () => {
          await withTarget(target.start, c.guardOff ? { plainDrainNotifiesConnections: false } : {}, async (t) => {
            const idle = await H1.open(t.trafficPort);
            await idle.get('/');
            const busy = await H1.open(t.trafficPort);
            const slow = busy.get('/slow?ms=800');
            await waitFor('the slow request in flight', 5_000, () => t.requestsInFlight() === 1);
            const answers: number[] = [];
            for (const q of c.calls) answers.push((await post(t, `/drain_listeners${q}`)).status);
            assert.deepEqual(answers, c.status);
            assert.equal(await takesNewConnections(t.trafficPort), c.accepts, 'new connections served');
            const reply = await slow;
            assert.equal(reply.status, 200, 'the in-flight request completes');
            assert.equal(reply.close, c.notifies, 'Connection: close on the response');
            await sleep(HCM_DRAIN_MS + 200);
            assert.equal(idle.closedAt, null, 'the drain never closes an idle keep-alive connection');
            assert.equal(t.alive(), true, 'no drain call ends the process');
            const ready = await request(`${t.adminUrl}/ready`);
            assert.deepEqual([ready.status, ready.body.trim()], [200, 'LIVE'], '/ready stays LIVE through a drain');
            idle.close();
            busy.close();
          });
        });
      }

      test('graceful alone stops the listeners after --drain-time-s; repeated graceful is a 200 no-op', async () => {
        await withTarget(target.start, { drainTimeS: 1 }, async (t) => {
          assert.equal((await post(t, '/drain_listeners?graceful')).status, 200);
          assert.equal((await post(t, '/drain_listeners?graceful')).status, 200);
          assert.equal(await newConnection(t.trafficPort), 'served');
          await waitFor('listeners stopped after drain-time-s', 4000, async () => !(await takesNewConnections(t.trafficPort)), 50);
        });
      });

      test('after the drain: HTTP/1 answers on a kept-alive connection say Connection: close; a client that obeys leaves the count', async () => {
        await withTarget(target.start, {}, async (t) => {
          const c = await H1.open(t.trafficPort);
          assert.equal((await c.get('/')).close, false);
          await post(t, '/drain_listeners?graceful');
          await post(t, '/drain_listeners');
          const after = await c.get('/');
          assert.deepEqual(after, { status: 200, close: true });
          c.close();
          await waitFor('the listener count drops to 0', 2000, async () => (await t.stats(`^${L.replace(/\./g, '\\.')}$`)).get(L) === 0);
        });
      });

      test('the HCM idle_timeout is what closes idle keep-alive connections, drain or not: HTTP/2 by GOAWAY at it, HTTP/1 by FIN drain_timeout + 1 s later', async () => {
        const idleMs = 700;
        await withTarget(target.start, { hcmIdleTimeoutMs: idleMs }, async (t) => {
          const h1 = await H1.open(t.trafficPort);
          await h1.get('/');
          const h1LastUse = Date.now();
          const h2 = new H2(t.trafficUrl);
          assert.equal(await h2.get('/'), 200);
          const h2LastUse = Date.now();
          await post(t, '/drain_listeners?graceful');
          await post(t, '/drain_listeners');
          await waitFor('both idle connections closed', 5000, () => h1.closedAt !== null && h2.closedAt !== null);
          // The lower bounds are the point (not the drain, which was at ~0 ms: the idle timer); the
          // upper ones leave 2 s for a loaded 2-core machine (measured idle: +0-20 ms).
          const h2Idle = h2.closedAt! - h2LastUse;
          assert.ok(h2Idle >= idleMs - 150 && h2Idle < idleMs + 2000, `HTTP/2 closed ${h2Idle} ms after its last request (idle_timeout ${idleMs})`);
          assert.equal(h2.goaways[0]?.code, http2.constants.NGHTTP2_NO_ERROR);
          const h1Idle = h1.closedAt! - h1LastUse;
          const expected = idleMs + HCM_DRAIN_MS + 1000;
          assert.ok(h1Idle >= expected - 150 && h1Idle < expected + 2000, `HTTP/1 closed ${h1Idle} ms after its last request (expected ~${expected})`);
        });
      });

      test('HTTP/2: no GOAWAY for an idle connection; a response after the drain brings GOAWAY (NO_ERROR), then the close', async () => {
        await withTarget(target.start, {}, async (t) => {
          const idle = new H2(t.trafficUrl);
          const active = new H2(t.trafficUrl);
          assert.equal(await idle.get('/'), 200);
          assert.equal(await active.get('/'), 200);
          await post(t, '/drain_listeners?graceful');
          await post(t, '/drain_listeners');
          await sleep(200);
          assert.deepEqual(idle.goaways, [], 'nothing tells an idle HTTP/2 connection');
          assert.equal(await active.get('/'), 200, 'a request on an existing connection is still served');
          await waitFor('GOAWAY', 2000, () => active.goaways.length > 0);
          assert.equal(active.goaways[0]!.code, http2.constants.NGHTTP2_NO_ERROR);
          assert.equal(active.goaways[0]!.lastStreamID, 2 ** 31 - 1, 'the first, graceful GOAWAY');
          await waitFor('the connection closes', HCM_DRAIN_MS + 2000, () => active.closedAt !== null);
          assert.equal(idle.closedAt, null);
          idle.session.destroy();
        });
      });

      test('the start: a static bootstrap has nothing warming and no xDS counter, so the sidecar reads it as serving its configuration', async () => {
        await withTarget(target.start, {}, async (t) => {
          const res = await request(`${t.adminUrl}${CONFIG_STATS_PATH}`);
          assert.equal(res.status, 200);
          const names = parseStatsText(res.body).map((x) => x.name);
          assert.ok(names.includes(CONFIG_STATS.listenersWarming) && names.includes(CONFIG_STATS.clustersWarming), res.body);
          assert.deepEqual(configServedFrom(res.body), { waiting: null, missing: [] });
        });
      });

      test('/server_info: the version the sidecar parses, LIVE through a drain', async () => {
        await withTarget(target.start, {}, async (t) => {
          await post(t, '/drain_listeners?graceful');
          await post(t, '/drain_listeners');
          const info = JSON.parse((await request(`${t.adminUrl}/server_info`)).body) as { version: string; state: string };
          assert.equal(info.state, 'LIVE');
          assert.equal(formatVersion(parseEnvoyVersion(info.version)!), target.version);
          const get = await request(`${t.adminUrl}/drain_listeners`);
          assert.deepEqual([get.status, get.body.trim()], [405, 'Method GET not allowed, POST required.']);
        });
      });

      test("under load: graceful&skip_exit keeps accepting and never converges; the sidecar's plain then graceful refuses new connects, loses nothing, and reaches 0", async () => {
        for (const [calls, converges] of [
          [['?graceful&skip_exit'], false],
          [['', '?graceful'], true],
        ] as const) {
          await withTarget(target.start, {}, async (t) => {
            const traffic = load(t, 6);
            await waitFor('load running', 5000, () => t.requestsInFlight() >= 2);
            for (const q of calls) await post(t, `/drain_listeners${q}`);
            const okAtDrain = traffic.outcome.ok;
            const samples: number[] = [];
            const until = Date.now() + 700;
            while (Date.now() < until) {
              samples.push(t.requestsInFlight());
              await sleep(10);
            }
            await traffic.stop();
            const busy = samples.filter((n) => n > 0).length / samples.length;
            if (converges) {
              assert.equal(samples[samples.length - 1], 0, 'in flight reaches 0');
              assert.ok(traffic.outcome.refused > 0, 'new connects are refused (an LB re-sends them)');
              assert.deepEqual(traffic.outcome.other, [], 'no resets, no errors: every accepted request completed');
              // The two races at the drain instant (docs/envoy.md) are rare: at most one in a run.
              assert.ok(traffic.outcome.races.length <= 1, `races at the drain: ${traffic.outcome.races.join('; ')}`);
            } else {
              assert.ok(busy > 0.75, `requests in flight in ${Math.round(busy * 100)}% of samples`);
              assert.ok(traffic.outcome.ok - okAtDrain > 20, 'requests keep arriving on new connections');
              assert.equal(traffic.outcome.refused, 0);
            }
          });
        }
      });
    });
  }
});

/** One request; 'refused' when its connection never got established (refused, or reset while queued). */
function loadRequest(url: string, agent: http.Agent): Promise<{ status: number } | { error: string; connected: boolean; answered: boolean; reused: boolean }> {
  return new Promise((resolve) => {
    let connected = false;
    let answered = false;
    const req = http.get(url, { agent, signal: AbortSignal.timeout(3000) }, (res) => {
      answered = true;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
      res.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message, connected, answered, reused: req.reusedSocket }));
    });
    req.on('socket', (socket) => {
      if (!socket.connecting) connected = true;
      else socket.once('connect', () => (connected = true));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message, connected, answered, reused: req.reusedSocket }));
  });
}

/** `workers` keep-alive clients sending 20-80 ms requests until stopped; counts the outcomes. */
function load(t: ProxyTarget, workers: number) {
  /**
   * `races`: a reset with no answer at all, on a reused keep-alive connection (HTTP/1's keep-alive
   * race: Envoy closed it as the next request went out) or on a new one (a connect the kernel had
   * completed in the listen backlog as Envoy closed its listeners): both named in docs/envoy.md,
   * neither a request the proxy accepted. Anything else is `other`.
   */
  const outcome = { ok: 0, refused: 0, races: [] as string[], other: [] as string[] };
  let running = true;
  const agents = Array.from({ length: workers }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  const loops = agents.map(async (agent) => {
    while (running) {
      const r = await loadRequest(`${t.trafficUrl}/slow?ms=${20 + Math.floor(Math.random() * 60)}`, agent);
      if ('status' in r) {
        if (r.status === 200) outcome.ok++;
        else outcome.other.push(`HTTP ${r.status}`);
      } else if (!r.connected) {
        outcome.refused++; // an LB re-sends a connection that was never established
        await sleep(10);
      } else if (r.error === 'ECONNRESET' && !r.answered) outcome.races.push(`reset before any answer on a ${r.reused ? 'reused' : 'new'} connection`);
      else outcome.other.push(`${r.error} on an established connection`);
    }
  });
  return {
    outcome,
    async stop() {
      running = false;
      await Promise.all(loops);
      for (const a of agents) a.destroy();
    },
  };
}
