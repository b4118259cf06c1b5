/**
 * End to end on real parts: a real Prometheus scrapes real gracegate sidecars and real Envoys
 * (Istio's stats tags) behind a real HAProxy, with the rules synth writes loaded, while two gateway
 * pods terminate under load:
 * - `good`: health-first behind an LB that keeps sessions on DOWN. The drain metrics reach
 *   Prometheus with the values the sidecar's /state shows, no alert is pending or firing, and every
 *   dashboard query returns data;
 * - `naive`: the naive order (503 at once, nothing else) behind `on-marked-down shutdown-sessions`:
 *   requests are cut at DOWN, and the loss alert's expression returns a series (and it fires).
 * The two run at once on the two pinned Envoys (test/support/envoy-versions.json), to keep the
 * suite lean.
 */
import assert from 'node:assert/strict';
import * as http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { adminRequest } from '../../../src/hc/envoy-admin';
import { parseStatsText } from '../../../src/hc/envoy-stats';
import { alertRuleGroups } from '../../../src/emit/monitoring/alert-rules';
import { grafanaDashboard } from '../../../src/emit/monitoring/grafana-dashboard';
import { ruleFileYaml } from '../../../src/emit/monitoring/prometheus-files';
import { ENVOY_SERIES, monitoringTargets } from '../../../src/emit/monitoring/targets';
import { planGateway, type Plan } from '../../../src/plan/plan-gateway';
import { proxyStatsMatcher } from '../../../src/pod/pod-changes';
import { spawnHc, tempStateFile, type SpawnedHc } from '../../support/hc';
import { sleep, waitFor } from '../../support/wait';
import { pinnedEnvoys } from '../../support/real-envoy';
import { resolved } from '../../support/spec-builder';
import { startHaproxy, type Haproxy } from '../../support/haproxy';
import { ISTIO_HCM_PREFIX, startIstioEnvoy, type IstioEnvoy } from '../../support/istio-envoy';
import { startPrometheus, type Prometheus } from '../../support/prometheus';

const REQUEST_MS = 1500;
/**
 * The naive run's requests outlast the whole run (they are cancelled when it ends, uncounted): a
 * request seen in flight on the leaving pod before its 503 is certainly still there at DOWN, however
 * slow the machine, so the flush has something to cut. With 1.5 s requests the request seen could end
 * before DOWN (CI saw "0 sessions active" at DOWN once).
 */
const NAIVE_REQUEST_MS = 30_000;
const WORKERS = 6;

interface Run {
  readonly name: 'good' | 'naive';
  readonly plan: Plan;
  readonly pod: string;
  envoy?: IstioEnvoy;
  hc?: SpawnedHc;
  peer?: SpawnedHc;
  lb?: Haproxy;
  stateAtEnd?: Record<string, unknown>;
  results: { ok: number; failed: number };
}

const runs: Run[] = (['good', 'naive'] as const).map((name) => ({
  name,
  plan: planGateway(
    resolved({ metadata: { name: `igw-${name}`, namespace: name }, spec: { observability: { prometheus: 'scrape-config', scrapeInterval: '1s' } } }),
  ),
  pod: `igw-${name}-5d9c7b8f4-x${name === 'good' ? 'g' : 'n'}7k2`,
  results: { ok: 0, failed: 0 },
}));
let prometheus: Prometheus;
const started = Date.now() / 1000;

function get(url: string, timeoutMs: number, cancel: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), cancel]) }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/**
 * Workers sending requests through the LB until `stop` resolves: REQUEST_MS long in the good run,
 * NAIVE_REQUEST_MS in the naive one. What is still under way at `stop` is cancelled and not counted.
 */
async function load(run: Run, stop: Promise<void>): Promise<void> {
  const cancel = new AbortController();
  void stop.then(() => cancel.abort());
  const ms = run.name === 'naive' ? NAIVE_REQUEST_MS : REQUEST_MS;
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (!cancel.signal.aborted) {
        try {
          const status = await get(`${run.lb!.url}/slow?ms=${ms}`, ms + 10_000, cancel.signal);
          if (status === 200) run.results.ok++;
          else run.results.failed++;
        } catch {
          if (!cancel.signal.aborted) run.results.failed++;
        }
      }
    }),
  );
}

/** The leaving pod's requests under way, as its Envoy counts them on the traffic listener's HCM. */
async function inFlight(envoy: IstioEnvoy): Promise<number> {
  const name = `http.${ISTIO_HCM_PREFIX}.downstream_rq_active`;
  const reply = await adminRequest(envoy.adminUrl, 'GET', `/stats?filter=${encodeURIComponent(`^${name.replace(/[.;]/g, '\\$&')}$`)}`, 1000);
  const stat = parseStatsText(reply.body).find((s) => s.name === name);
  if (!stat) throw new Error(`${name} is not in the Envoy's stats (is it in the stats matcher's inclusion suffixes?)`);
  return stat.value;
}

/** The pod's termination: the good run's health-first drain to CLOSED, or the naive run's 503 at once. */
async function terminate(run: Run): Promise<void> {
  await sleep(1000);
  if (run.name === 'good') {
    assert.equal((await run.hc!.post('/drain?witness=none')).status, 202);
    await waitFor('CLOSED', 15_000, async () => (await run.hc!.state())['state'] === 'CLOSED', 100);
  } else {
    // Only once requests are under way on the leaving pod (its Envoy counts them), so that the
    // flush at DOWN has something to cut however slow the machine is.
    await waitFor('requests in flight on the leaving pod', 10_000, async () => (await inFlight(run.envoy!)) > 0, 50);
    assert.equal((await run.hc!.post('/close-lb')).status, 200);
    // DOWN after two failed probes, and the flush with it: HAProxy says so in its log.
    await waitFor('HAProxy marks the leaving pod DOWN', 10_000, () => run.lb!.markedDown('leaving'), 50);
    await sleep(500);
  }
}

before(async () => {
  const envoys = pinnedEnvoys();
  await Promise.all(
    runs.map(async (run, i) => {
      run.envoy = await startIstioEnvoy({ version: envoys[i % envoys.length]!.version, statsInclusionSuffixes: proxyStatsMatcher(run.plan).inclusionSuffixes });
      run.hc = await spawnHc([
        '--envoy-admin',
        run.envoy.adminUrl,
        '--sequence',
        'health-first',
        '--lb-buffer',
        '1.5s',
        '--drain-timeout',
        '6s',
        '--poll-interval',
        '200ms',
        '--final-scrape-wait',
        '5s',
        '--state-file',
        tempStateFile(),
      ]);
      // The peer pod: another sidecar on the same Envoy answers its LB probe; its traffic goes to the app.
      run.peer = await spawnHc(['--envoy-admin', run.envoy.adminUrl, '--state-file', tempStateFile()]);
      await waitFor(
        'both sidecars OPEN',
        10_000,
        async () => (await run.hc!.get('/health_check.html')).status === 200 && (await run.peer!.get('/health_check.html')).status === 200,
      );
      run.lb = await startHaproxy({
        shutdownSessions: run.name === 'naive',
        interMs: 300,
        servers: [
          { name: 'leaving', trafficPort: run.envoy.trafficPort, healthPort: Number(new URL(run.hc.healthUrl).port) },
          { name: 'peer', trafficPort: run.envoy.upstream!.port, healthPort: Number(new URL(run.peer.healthUrl).port) },
        ],
      });
    }),
  );
  const scrapeJob = (run: Run) => {
    const t = monitoringTargets(run.plan);
    const labels = { namespace: t.namespace, pod: run.pod };
    return {
      job_name: t.job,
      static_configs: [
        { targets: [new URL(run.hc!.metricsUrl).host], labels: { ...labels, container: t.sidecarContainer } },
        { targets: [run.envoy!.adminHostPort], labels: { ...labels, container: 'istio-proxy', __metrics_path__: '/stats/prometheus' } },
      ],
      // As synth's scrape job: all of the sidecar, only the Envoy series the alerts read.
      metric_relabel_configs: [{ source_labels: ['container', '__name__'], regex: `${t.sidecarContainer};.*|.*;(${ENVOY_SERIES.join('|')})`, action: 'keep' }],
    };
  };
  prometheus = await startPrometheus(
    { global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' }, scrape_configs: runs.map(scrapeJob) },
    Object.fromEntries(runs.map((run) => [`rules-${run.name}.yaml`, ruleFileYaml(run.plan)])),
  );
  await waitFor(
    'every target up',
    15_000,
    async () => {
      const targets = await prometheus.targets();
      return targets.length === 4 && targets.every((t) => t.health === 'up');
    },
    200,
  );
});

after(async () => {
  await prometheus?.stop();
  await Promise.all(runs.flatMap((run) => [run.lb?.stop(), run.hc?.kill(), run.peer?.kill(), run.envoy?.stop()]));
});

describe('a real Prometheus over real sidecars and Envoys', () => {
  test('terminations under load: good (health-first, LB keeps sessions) and naive (503 at once, LB flushes at DOWN)', async () => {
    await Promise.all(
      runs.map(async (run) => {
        let release!: () => void;
        const stop = new Promise<void>((r) => (release = r));
        const traffic = load(run, stop);
        try {
          await terminate(run);
        } finally {
          release();
          await traffic;
        }
        run.stateAtEnd = await run.hc!.state();
        if (run.name === 'good') {
          // SIGTERM as the kubelet sends it at CLOSED: the sidecar waits for one more scrape, then exits.
          // Bounded: its final-scrape wait (5 s) and Prometheus's interval (1 s), twice over.
          run.hc!.proc.kill('SIGTERM');
          const code = await run.hc!.exit(12_000);
          assert.equal(code, 0, `the sidecar's exit (signal ${run.hc!.proc.signalCode})`);
          assert.ok(
            run.hc!.logs.some((l) => l['msg'] === 'final scrape served'),
            'Prometheus scraped the final state',
          );
        }
      }),
    );
    const [good, naive] = runs as [Run, Run];
    assert.equal(good.results.failed, 0, `good: no client failure (${good.results.ok} ok)`);
    assert.ok(good.results.ok > 0);
    assert.equal(naive.results.ok, 0, 'naive: every request outlasts the run');
    assert.ok(
      naive.results.failed > 0,
      `naive: the flush at DOWN cut requests (${naive.results.failed} failed, ${naive.results.ok} ok); HAProxy:\n${naive
        .lb!.logs()
        .split('\n')
        .filter((l) => /leaving/.test(l))
        .slice(-10)
        .join('\n')}`,
    );
    await sleep(2500); // two evaluations after the last scrape
  });

  test("good: the drain metrics in Prometheus are the sidecar's, and no alert is pending or firing", async () => {
    const run = runs[0]!;
    const j = monitoringTargets(run.plan).matcher;
    const one = async (expr: string) => {
      const result = await prometheus.query(expr);
      assert.equal(result.length, 1, `${expr}: ${JSON.stringify(result)}`);
      return Number(result[0]!.value![1]);
    };
    const events = run.stateAtEnd!['events'] as { id: number; at: string | null }[];
    const at = (id: number) => Date.parse(events.find((e) => e.id === id)!.at!) / 1000;
    const drained = at(4) - at(3);
    assert.equal(await one(`max_over_time(gracegate_hc_drain_duration_seconds_count{${j}}[5m])`), 1);
    assert.ok(Math.abs((await one(`max_over_time(gracegate_hc_drain_duration_seconds_sum{${j}}[5m])`)) - drained) < 0.002, `drain ${drained} s as in /state`);
    assert.equal(await one(`max_over_time(gracegate_hc_drain_timeouts_total{${j}}[5m])`), 0);
    assert.equal(await one(`last_over_time(gracegate_hc_event_in_flight{${j},event="4"}[5m])`), 0);
    assert.equal(await one(`last_over_time(gracegate_hc_state{${j},state="CLOSED"}[5m])`), 1, 'the final scrape saw CLOSED');
    assert.equal(await one(`max_over_time(gracegate_hc_terminating{${j}}[5m])`), 1);
    // The sidecar is gone: Prometheus marks its series stale at the first failed scrape (1 s
    // interval; bounded, as a loaded machine may run late).
    await waitFor("the sidecar's series stale in Prometheus", 15_000, async () => (await prometheus.query(`gracegate_hc_state{${j}}`)).length === 0, 250);
    const info = await prometheus.query(`last_over_time(gracegate_hc_info{${j}}[5m])`);
    assert.equal(info[0]!.metric['sequence'], 'health-first');
    assert.equal(info[0]!.metric['envoy_version'], run.envoy!.version, "Envoy's version, from /server_info");

    const mine = (await prometheus.alerts()).filter((a) => a.labels['gateway'] === 'igw-good');
    assert.deepEqual(mine, [], 'no alert pending or firing after a good termination');
    for (const rule of alertRuleGroups(run.plan).flatMap((g) => g.rules)) {
      assert.deepEqual(await prometheus.query(rule.expr), [], `${rule.alert}'s expression returns nothing`);
    }
  });

  test("naive: the loss alert's expression returns a series, from the gateway's client-closed active requests", async () => {
    const run = runs[1]!;
    const j = monitoringTargets(run.plan).matcher;
    const resets = await prometheus.query(`max_over_time(envoy_http_downstream_cx_destroy_remote_active_rq{${j}}[5m])`);
    assert.equal(resets.length, 1, JSON.stringify(resets));
    assert.equal(resets[0]!.metric['http_conn_manager_prefix'], 'outbound_0.0.0.0_8080', "Istio's tag names the listener's HCM");
    assert.ok(Number(resets[0]!.value![1]) > 0, 'Envoy counted the connections HAProxy closed under active requests');
    const loss = alertRuleGroups(run.plan)
      .flatMap((g) => g.rules)
      .find((r) => r.alert === 'GracegateTerminationLoss')!;
    const series = await prometheus.query(loss.expr);
    assert.equal(series.length, 1, JSON.stringify(series));
    assert.equal(series[0]!.metric['namespace'], 'naive');
    const firing = await waitFor(
      'the loss alert firing',
      5000,
      async () =>
        (await prometheus.alerts()).find(
          (a) => a.labels['alertname'] === 'GracegateTerminationLoss' && a.labels['gateway'] === 'igw-naive' && a.state === 'firing',
        ),
      200,
    );
    assert.ok(firing);
  });

  test("every dashboard panel query returns data from this Prometheus (the good run's gateway)", async () => {
    const end = Date.now() / 1000;
    const range = `${Math.ceil(end - started) + 5}s`;
    // The naive pod never drained, so it never counted in-flight: its 'In-flight now' is rightly empty.
    for (const run of [runs[0]!]) {
      for (const panel of grafanaDashboard(run.plan).panels ?? []) {
        if (!('targets' in panel)) continue;
        for (const target of panel.targets ?? []) {
          const expr = String(target['expr'])
            .replace(/\$__range/g, range)
            .replace(/\$__rate_interval/g, '5s');
          const result = await prometheus.queryRange(expr, Math.floor(started), Math.ceil(end), 1);
          assert.ok(result.length > 0, `${run.name}: panel '${panel.title}' query ${expr} returned nothing`);
        }
      }
    }
  });
});
