/**
 * drain-first behind an LB that reuses its connections to the pod, on the real parts: HAProxy (as
 * `gracegate lb-config` writes its backend) -> real Envoy (each pinned version) -> an app, with the
 * real `gracegate hc` configured from the plan. Envoy closes a kept-alive connection only with the
 * first response it begins after the drain (docs/envoy.md), so:
 *
 * - keep-alive (`httpServerClose: false`): a request sent on a connection whose response had begun
 *   before the drain is served by the draining pod, in full; in-flight reaches 0 only after it, later
 *   than `ceil(1.2 x p99)` allows, and within the plan's `ceil(1.2 x 2 x p99)`. A request HAProxy
 *   sends on such a connection after [4], before DOWN, is served too and cut by the flush at DOWN
 *   (the residue the finding drain-first-connection-reuse names).
 * - `option http-server-close` (what lb-config writes for drain-first): every request opens a new
 *   connection, which the draining pod refuses and HAProxy re-sends to the other pod; in-flight
 *   reaches 0 with the requests under way at the drain, and nothing reaches the pod after [4].
 *
 * The orderings asserted are causal (a request starts after the one before it on its connection
 * ended; [4] comes after the last request the pod serves), not timings. The durations are printed;
 * with GRACEGATE_WRITE_RESULTS=1, a run in which every test passed records them as docs/envoy.md's
 * table in docs/benchmarks.json (`connection-reuse`; test/docs-numbers.test.ts holds the page to it).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import * as path from 'node:path';
import { Proc } from '../support/daemon';
import { planGateway, type Plan } from '../../src/plan/plan-gateway';
import { hcConfigFor } from '../../src/pod/hc-config';
import { renderLbConfig } from '../../src/lb-config';
import { resolved } from '../support/spec-builder';
import { freePort, pinnedEnvoys, startEnvoy } from '../support/real-envoy';
import { startTestUpstream } from '../support/test-upstream';
import { spawnHc, tempStateFile } from '../support/hc';
import { waitFor } from '../support/wait';
import { COUNTING_STATS_SUFFIXES } from '../../src/contract/envoy-stat-names';
import { testDir } from '../support/tmp';
import { writeBenchResult } from '../support/bench-results';

const P99 = 2;

function planFor(httpServerClose: boolean | undefined): Plan {
  return planGateway(
    resolved({
      spec: {
        traffic: { longRequestP99Seconds: P99 },
        loadBalancer: {
          model: 'haproxy',
          inter: '200ms',
          fall: 3,
          rise: 1,
          onMarkedDown: 'shutdown-sessions',
          redispatch: true,
          retries: 3,
          ...(httpServerClose === undefined ? {} : { httpServerClose }),
        },
        drain: { lbMargin: '300ms', pollInterval: '50ms' },
        // No kube-proxy between HAProxy and the pods on loopback: nothing to wait for after readiness.
        kubeProxy: { minSyncPeriod: 0, propagation: 0 },
      },
    }),
  );
}

/** A keep-alive client connection of its own: every request on it goes over one socket. */
function client(port: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = (p: string, onHeaders?: () => void) =>
    new Promise<{ status: number; startedAt: number; endedAt: number }>((resolve, reject) => {
      const startedAt = Date.now();
      const req = http.get({ host: '127.0.0.1', port, path: p, agent, timeout: 15_000 }, (res) => {
        onHeaders?.();
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, startedAt, endedAt: Date.now() }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.on('timeout', () => req.destroy(new Error('client timeout')));
    });
  return { get, close: () => agent.destroy() };
}

async function startHaproxy(dir: string, backend: string) {
  const port = await freePort();
  const socket = path.join(dir, 'haproxy.sock');
  const file = path.join(dir, 'haproxy.cfg');
  fs.writeFileSync(
    file,
    [
      'global',
      `    stats socket ${socket} level admin`,
      '    nbthread 1',
      'defaults',
      '    mode http',
      '    timeout connect 1s',
      '    timeout client 30s',
      '    timeout server 30s',
      '    timeout http-keep-alive 10s',
      'frontend f',
      `    bind 127.0.0.1:${port}`,
      '    default_backend igw',
      // `balance first`: every request goes to gw-1 (the draining pod) while it is UP, so which pod
      // served a request says whether HAProxy reused a connection or re-sent a refused one.
      backend.replace(/^backend igw$/m, 'backend igw\n    balance first'),
    ].join('\n'),
  );
  const proc = new Proc('haproxy', 'haproxy', ['-db', '-f', file]);
  const command = (cmd: string) =>
    new Promise<string>((resolve, reject) => {
      const s = connect(socket);
      let out = '';
      s.setEncoding('utf8');
      s.on('connect', () => s.write(`${cmd}\n`));
      s.on('data', (c: string) => (out += c));
      s.on('close', () => resolve(out));
      s.on('error', reject);
    });
  /** HAProxy's view of a server: UP, DOWN, ... (`show stat` CSV, column 18). */
  const status = async (server: string) =>
    (await command('show stat'))
      .split('\n')
      .map((l) => l.split(','))
      .find((c) => c[0] === 'igw' && c[1] === server)?.[17];
  return {
    port,
    status,
    stderr: () => proc.stderrText(),
    stop: () => proc.stop(),
  };
}

/** Times in ms after the drain call ([3]). */
type Run = { zero: number; r1End: number; r2: 'pod-1' | 'pod-2'; r2End: number; r3: string; drainTimedOut: boolean; drainTimeoutSeconds: number };

async function runTermination(version: string, httpServerClose: boolean | undefined): Promise<Run> {
  const plan = planFor(httpServerClose);
  const dir = testDir('gracegate-reuse-');
  const app1 = await startTestUpstream();
  const app2 = await startTestUpstream();
  // The other pod's health endpoint: always 200.
  const health2 = http.createServer((_q, r) => r.end('OPEN'));
  await new Promise<void>((r) => health2.listen(0, '127.0.0.1', r));
  const envoy = await startEnvoy({ version, upstreamPort: app1.port, statsInclusionSuffixes: [...COUNTING_STATS_SUFFIXES] });
  const configFile = path.join(dir, 'hc.json');
  fs.writeFileSync(configFile, JSON.stringify(hcConfigFor(plan)));
  const hc = await spawnHc(['--config', configFile, '--envoy-admin', envoy.adminUrl, '--state-file', tempStateFile()]);
  // The kubelet's readiness probe, from loopback: the sidecar's start hold counts from it.
  await waitFor('the sidecar ready (WARMING)', 10_000, async () => ((await hc.get('/health')).status === 200 ? true : undefined));
  const backend = renderLbConfig({
    plan,
    servers: [
      { host: '127.0.0.1', port: envoy.trafficPort, checkPort: Number(new URL(hc.healthUrl).port) },
      { host: '127.0.0.1', port: app2.port, checkPort: (health2.address() as AddressInfo).port },
    ],
  });
  const lb = await startHaproxy(dir, backend);
  const c1 = client(lb.port);
  const c2 = client(lb.port);
  const c3 = client(lb.port);
  try {
    await waitFor('both pods UP in HAProxy', 10_000, async () => (await lb.status('gw-1')) === 'UP' && (await lb.status('gw-2')) === 'UP', 50);
    // c2's connection has carried one request before the drain, then sits idle (an LB's pooled connection).
    assert.equal((await c2.get('/')).status, 200);
    assert.equal(app1.served.get('/'), 1, 'the warm-up went to the pod that will drain');
    // Two streams whose headers go out before the drain: r1 (one p99 long), and a longer one on c3
    // that bridges r1's end, so in-flight does not touch 0 between r1 and the next request on r1's
    // connection (it ends long before that request does).
    let r1Headers!: () => void;
    const headers = new Promise<void>((resolve) => (r1Headers = resolve));
    const r1Answer = c1.get(`/stream?chunks=10&intervalMs=${P99 * 100}`, () => r1Headers());
    const bridge = c3.get(`/stream?chunks=12&intervalMs=${P99 * 100}`).catch((err: Error) => ({ status: 0, error: err.message }));
    await headers;
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await hc.post('/drain?witness=none')).status, 202);
    const r1 = await r1Answer;
    assert.equal(r1.status, 200);
    const slowBefore1 = app1.served.get('/slow') ?? 0;
    const r2 = await c1.get(`/slow?ms=${P99 * 1000}`);
    assert.equal(r2.status, 200, 'r2 answered');
    const r2Pod = (app1.served.get('/slow') ?? 0) > slowBefore1 ? 'pod-1' : 'pod-2';

    assert.equal((await bridge).status, 200, 'the bridging stream finished');
    const state = await waitFor(
      'in-flight 0 [4]',
      10_000,
      async () => {
        const s = await hc.state();
        return s.events[3]!.at !== null ? s : undefined;
      },
      10,
    );
    // Right after [4], before HAProxy can see the 503 (two checks 100 ms apart): c2's idle connection.
    const slowBefore3 = app1.served.get('/slow') ?? 0;
    const r3 = await c2.get(`/slow?ms=${P99 * 1000}`).then(
      (r) => `HTTP ${r.status}`,
      (err: Error) => `error: ${err.message}`,
    );
    const r3Pod = (app1.served.get('/slow') ?? 0) > slowBefore3 ? 'pod-1' : 'pod-2';
    const drainAt = Date.parse(state.events[2]!.at!);
    assert.ok(r1.endedAt > drainAt, 'r1 was under way at the drain');
    return {
      zero: Date.parse(state.events[3]!.at!) - drainAt,
      r1End: r1.endedAt - drainAt,
      r2: r2Pod,
      r2End: r2.endedAt - drainAt,
      r3: `${r3} from ${r3Pod}`,
      drainTimedOut: (await hc.state()).drainTimedOut,
      drainTimeoutSeconds: plan.timings.drainTimeoutSeconds,
    };
  } finally {
    c1.close();
    c2.close();
    c3.close();
    await lb.stop();
    await hc.stop();
    await envoy.stop();
    await app1.close();
    await app2.close();
    health2.close();
  }
}

const measured: string[] = [];
/** The runs whose assertions all passed, by Envoy version and connection mode. */
const passed: { version: string; keepAlive: boolean; run: Run }[] = [];

/** docs/envoy.md's table: times after the drain call [3], one run each. */
function reuseTable(): string {
  const pod = (p: string) => (p === 'pod-1' ? 'the draining pod' : 'the other pod');
  const rows = [...passed]
    .sort((a, b) => a.version.localeCompare(b.version) || Number(b.keepAlive) - Number(a.keepAlive))
    .map(({ version, keepAlive, run }) => {
      const next = run.r2 === 'pod-1' ? `${pod(run.r2)}, ends ${run.r2End} ms` : `${pod(run.r2)} (refused, redispatched)`;
      const after4 = run.r3.replace(/ from (pod-\d)$/, (_, p: string) => `, from ${pod(p)}`);
      const mode = keepAlive ? 'kept alive (`httpServerClose: false`)' : '`option http-server-close`';
      return `| ${version} | ${mode} | ${run.r1End} ms | ${next} | ${run.zero} ms | ${run.drainTimeoutSeconds} s: ${run.drainTimedOut ? 'reached' : 'not reached'} | ${after4} |`;
    });
  return [
    `drain-first behind HAProxy, p99 ${P99} s; times after the drain call [3], one run each:`,
    '',
    '| Envoy | connections to the pod | stream ends | next request served by | in-flight 0 [4] | drain timeout (plan) | request after [4] |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

after(() => {
  if (measured.length > 0) console.log(`drain-first behind HAProxy, p99 ${P99}s:\n${measured.join('\n')}`);
  if (process.env.GRACEGATE_WRITE_RESULTS === '1' && passed.length === 2 * pinnedEnvoys().length)
    writeBenchResult('connection-reuse', 'GRACEGATE_WRITE_RESULTS=1 node --test dist/test/lb/drain-first-connection-reuse.test.js', reuseTable());
});

describe('drain-first behind HAProxy on real Envoy: reused connections to the pod', { concurrency: 2 }, () => {
  for (const { version } of pinnedEnvoys()) {
    test(`Envoy ${version}, keep-alive to the pod (httpServerClose: false): one more request per connection after the drain, and one after [4]`, {
      timeout: 60_000,
    }, async () => {
      const run = await runTermination(version, false);
      measured.push(`  ${version} keep-alive: ${JSON.stringify(run)}`);
      assert.equal(run.drainTimeoutSeconds, Math.ceil(1.2 * 2 * P99), 'the plan waits for two requests');
      assert.equal(run.r2, 'pod-1', 'the request after r1 on the same connection was served by the draining pod');
      // Envoy's count drops as it finishes the response, a moment before the client sees the end.
      assert.ok(run.zero >= run.r2End - 50, `[4] came only after r2 ended (${run.zero} ms after the drain; r2 ended at ${run.r2End} ms)`);
      assert.ok(
        run.zero > Math.ceil(1.2 * P99) * 1000,
        `the one-request drain timeout, ceil(1.2 x p99) = ${Math.ceil(1.2 * P99)} s, would have fired first (zero at ${run.zero} ms; r1 ended at ${run.r1End} ms)`,
      );
      assert.equal(run.drainTimedOut, false, `the plan's ${run.drainTimeoutSeconds} s covered it`);
      assert.match(run.r3, /from pod-1$/, 'after [4] the idle connection still reached the draining pod');
      assert.match(run.r3, /^error/, 'and the flush at DOWN cut the request');
      passed.push({ version, keepAlive: true, run });
    });

    test(`Envoy ${version}, option http-server-close (lb-config for drain-first): the pod serves nothing after the drain but what was under way`, {
      timeout: 60_000,
    }, async () => {
      const run = await runTermination(version, undefined);
      measured.push(`  ${version} http-server-close: ${JSON.stringify(run)}`);
      assert.equal(run.drainTimeoutSeconds, Math.ceil(1.2 * P99), 'the plan waits for one request');
      assert.equal(run.r2, 'pod-2', 'the request after r1 opened a new connection: refused, and re-sent to the other pod');
      assert.ok(run.zero < run.r2End, `[4] did not wait for it (${run.zero} ms after the drain; r2 ended at ${run.r2End} ms)`);
      assert.equal(run.drainTimedOut, false);
      assert.equal(run.r3, 'HTTP 200 from pod-2', 'after [4] nothing reaches the draining pod, and nothing is cut');
      passed.push({ version, keepAlive: false, run });
    });
  }
});
