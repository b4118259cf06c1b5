/**
 * `gracegate measure p99` on what real parts produce: access logs written by a real Envoy in
 * Istio's text format (Envoy 1.36.4) and JSON format (1.40.0), and the request-duration histogram
 * a real Prometheus scraped from that Envoy. The traffic is known: 98 short requests, 2 long ones,
 * a WebSocket session and an SSE stream (both long-lived, kept apart). Bad input exits 2.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { recommendP99 } from '../../src/measure/p99-report';
import { waitFor } from '../hc/helpers';
import { pinnedEnvoys } from '../support/real-envoy';
import { REPO_ROOT, runCli } from '../support/run-cli';
import { startIstioEnvoy, type IstioEnvoy } from '../support/istio-envoy';
import { startPrometheus, type Prometheus } from '../support/prometheus';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gracegate-measure-'));
const LONG_MS = 1500;
const SHORT_MS = 20;
const STREAM_MS = 2200;

interface Source {
  readonly format: 'text' | 'json';
  readonly log: string;
  envoy?: IstioEnvoy;
  /** The longest of the two long requests as the client timed it (Envoy's duration lies within it). */
  longClientMs?: number;
}
const sources: Source[] = [
  { format: 'text', log: path.join(dir, 'access.log') },
  { format: 'json', log: path.join(dir, 'access.json') },
];
let prometheus: Prometheus | undefined;

function get(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

/** A WebSocket session held open for `ms` (Envoy logs the upgrade, 101, when it closes). */
function webSocketFor(url: string, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws'));
    ws.on('open', () => setTimeout(() => ws.close(), ms));
    ws.on('close', () => resolve());
    ws.on('error', reject);
  });
}

function measure(args: string[]) {
  const r = runCli(['measure', 'p99', ...args], { timeoutMs: 60_000 });
  return { ...r, json: r.status === 0 && args.includes('json') ? (JSON.parse(r.stdout) as Record<string, unknown>) : undefined };
}

before(async () => {
  const envoys = pinnedEnvoys();
  await Promise.all(
    sources.map(async (s, i) => {
      s.envoy = await startIstioEnvoy({
        version: envoys[i % envoys.length]!.version,
        accessLog: { path: s.log, format: s.format },
        routes: [{ name: 'slow', prefix: '/slow' }],
        statsInclusionSuffixes: ['downstream_rq_time'],
        statsFlushIntervalMs: 500,
      });
    }),
  );
  // Prometheus scrapes the first Envoy from before the traffic, as it would in a cluster: increase()
  // needs the histogram's samples from before the requests.
  prometheus = await startPrometheus({
    global: { scrape_interval: '1s', scrape_timeout: '900ms' },
    scrape_configs: [
      {
        job_name: 'gateway',
        metrics_path: '/stats/prometheus',
        static_configs: [{ targets: [sources[0]!.envoy!.adminHostPort], labels: { namespace: 'istio-ingress', pod: 'igw-1' } }],
      },
    ],
  });
  await waitFor('the empty histogram scraped', async () => (await prometheus!.query('envoy_http_downstream_rq_time_count')).length > 0, 20_000, 250);
  await Promise.all(
    sources.map(async (s) => {
      const url = s.envoy!.trafficUrl;
      const streams = Promise.all([webSocketFor(`${url}/ws`, STREAM_MS), get(`${url}/sse?events=4&intervalMs=${STREAM_MS / 4}`)]);
      const short = Array.from({ length: 98 }, (_, n) => get(`${url}/slow?ms=${SHORT_MS}&n=${n}`));
      const timed = async () => {
        const start = performance.now();
        const status = await get(`${url}/slow?ms=${LONG_MS}`);
        s.longClientMs = Math.max(s.longClientMs ?? 0, performance.now() - start);
        return status;
      };
      const long = [timed(), timed()];
      assert.deepEqual([...new Set(await Promise.all([...short, ...long]))], [200]);
      await streams;
    }),
  );
  // Envoy writes its access log every second (--file-flush-interval-msec 1000, as pilot-agent).
  await waitFor(
    'every line in both logs',
    () => sources.every((s) => fs.existsSync(s.log) && fs.readFileSync(s.log, 'utf8').trim().split('\n').length === 102),
    10_000,
    100,
  );
});

after(async () => {
  await prometheus?.stop();
  await Promise.all(sources.map((s) => s.envoy?.stop()));
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('access logs from a real Envoy', () => {
  for (const format of ['text', 'json'] as const) {
    test(`${format}: p99 from the 100 requests, the WebSocket and SSE streams kept apart, longest by route`, () => {
      const source = sources.find((s) => s.format === format)!;
      const r = measure(['--access-log', source.log, '--stream-path', '^/sse', '--format', 'json']);
      assert.equal(r.status, 0, r.stderr);
      const j = r.json!;
      assert.equal(j['samples'], 100);
      // Nearest rank: the 99th of 100 durations is one of the two long requests: at least what the app
      // held it, at most what the client timed it in this run (a loaded machine makes both longer).
      const p99 = j['p99Seconds'] as number;
      assert.ok(p99 >= LONG_MS / 1000 && p99 <= source.longClientMs! / 1000, `p99 ${p99} s, the client timed the long requests at ${source.longClientMs} ms`);
      assert.ok((j['p50Seconds'] as number) < 0.5);
      assert.equal(j['p999Seconds'], j['maxSeconds']);
      assert.equal(j['recommendedLongRequestP99Seconds'], recommendP99(p99), 'the p99 rounded up to whole seconds');
      const streams = j['streams'] as Record<string, number>;
      assert.equal(streams['count'], 2);
      assert.equal(streams['upgrades'], 1, 'the WebSocket session (101)');
      assert.equal(streams['byStreamPath'], 1, 'the SSE stream');
      assert.ok(streams['maxSeconds']! >= STREAM_MS / 1000, 'the streams last longer than any request, and are not in the p99');
      const routes = j['longestByRoute'] as { route: string; requests: number }[];
      assert.equal(routes[0]!.route, 'slow', "Envoy's route name");
      assert.equal(routes[0]!.requests, 100);
      assert.equal((j['longestRequests'] as { seconds: number }[]).length, 10);
      assert.match(String((j['window'] as Record<string, string>)['from']), /^\d{4}-\d\d-\d\dT/);
    });
  }

  test('both logs at once, in text for people; without --stream-path an SSE stream counts as a request', () => {
    const r = measure(['--access-log', sources[0]!.log, sources[1]!.log]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /requests: 202\n/);
    // The p99 of 202 is the 200th: one of the four long requests, timed within the longest client's span.
    const recommended = Number(/spec\.traffic\.longRequestP99Seconds: (\d+)\n\s+why: p99 of 202 request durations/.exec(r.stdout)?.[1]);
    const longest = Math.max(...sources.map((s) => s.longClientMs!)) / 1000;
    assert.ok(recommended >= recommendP99(LONG_MS / 1000) && recommended <= recommendP99(longest), `${recommended} s, long requests timed up to ${longest} s`);
    assert.match(r.stdout, /long-lived streams, kept apart: 2 \(2 upgrades/, 'without --stream-path the SSE stream is a request; upgrades are always apart');
  });
});

describe('from a real Prometheus', () => {
  test("Envoy's downstream_rq_time histogram over a window: p99 within its bucket, samples, routes", async () => {
    // Envoy's histogram holds the 100 requests and the SSE stream (and the WebSocket session, on
    // versions that time upgrades as requests).
    const scraped = await waitFor(
      'the histogram scraped',
      async () => {
        const v = await prometheus!.query('sum(envoy_http_downstream_rq_time_count)');
        return v.length === 1 && Number(v[0]!.value![1]) >= 101 && Number(v[0]!.value![1]);
      },
      20_000,
      250,
    );
    await new Promise((r) => setTimeout(r, 1500));
    const r = measure(['--prometheus', prometheus!.url, '--window', '5m', '--format', 'json']);
    assert.equal(r.status, 0, r.stderr);
    const j = r.json!;
    assert.equal((j['source'] as Record<string, string>)['metric'], 'envoy_http_downstream_rq_time', "auto: no Istio histogram here, so Envoy's");
    // An estimate: increase() extrapolates towards the window's edges (up to a fifth more here, with
    // a series only seconds old in a 5 m window); never fewer than were counted.
    assert.ok((j['samples'] as number) >= scraped && (j['samples'] as number) <= 1.3 * scraped, `${String(j['samples'])} vs ${scraped}`);
    // histogram_quantile interpolates within the bucket of Envoy's (1 s, 2.5 s, 5 s, ...) that holds
    // the long requests: above 1 s, at most the bound of the bucket the client's longest time falls in.
    const p99 = j['p99Seconds'] as number;
    const bucket = [2.5, 5, 10].find((b) => b >= sources[0]!.longClientMs! / 1000) ?? Number.POSITIVE_INFINITY;
    assert.ok(p99 > 1 && p99 <= bucket, `p99 ${p99} s, the client timed the long requests at ${sources[0]!.longClientMs} ms`);
    assert.equal(j['recommendedLongRequestP99Seconds'], recommendP99(p99));
    assert.match(String((j['warnings'] as string[])[0]), /cannot tell long-lived streams/);
    assert.equal((j['longestByRoute'] as { route: string }[])[0]!.route, 'outbound_0.0.0.0_8080');
  });

  test('a histogram that does not exist, and an unreachable Prometheus: exit 2 with the reason', () => {
    const missing = measure(['--prometheus', prometheus!.url, '--histogram', 'istio']);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /no histogram istio_request_duration_milliseconds_bucket\{\} in Prometheus at/);
    const unreachable = measure(['--prometheus', 'http://127.0.0.1:9']);
    assert.equal(unreachable.status, 2);
    assert.match(unreachable.stderr, /cannot reach Prometheus at http:\/\/127\.0\.0\.1:9\/: ECONNREFUSED/);
    const badWindow = measure(['--prometheus', prometheus!.url, '--window', 'yesterday']);
    assert.equal(badWindow.status, 2);
    assert.match(badWindow.stderr, /--window must be a Prometheus range/);
  });
});

describe('bad input', () => {
  test('an unknown format, an empty log, a missing file, a directory, no source: exit 2 naming the file (and line)', () => {
    const nginx = path.join(dir, 'nginx.log');
    fs.writeFileSync(nginx, '127.0.0.1 - - [30/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 612 "-" "curl/8.0"\n');
    const empty = path.join(dir, 'empty.log');
    fs.writeFileSync(empty, '\n\n');
    const cases: [string[], RegExp][] = [
      [['--access-log', nginx], new RegExp(`${nginx.replace(/[.]/g, '\\.')}:1: not an Envoy access-log line in Istio's text or JSON format`)],
      [['--access-log', empty], /no requests in .*empty\.log: the log is empty/],
      [['--access-log', path.join(dir, 'nope.log')], /nope\.log: cannot read: ENOENT \(no such file\)/],
      [['--access-log', dir], /cannot read: EISDIR/],
      [[], /missing a source: --access-log FILE\.\.\. or --prometheus URL/],
      [['--access-log', empty, '--stream-path', '('], /--stream-path: not a regular expression/],
    ];
    for (const [args, message] of cases) {
      const r = measure(args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.equal(r.stdout, '');
    }
  });

  test('a line in the middle that is not an access-log line is skipped and reported, not fatal', () => {
    const mixed = path.join(dir, 'mixed.log');
    const lines = fs.readFileSync(sources[0]!.log, 'utf8').trim().split('\n');
    fs.writeFileSync(mixed, [...lines.slice(0, 10), 'envoy: some stray message', ...lines.slice(10)].join('\n'));
    const r = measure(['--access-log', mixed, '--format', 'json']);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.json!['skippedLines'], { count: 1, first: `${mixed}:11` });
  });
});

describe('--write SPEC', () => {
  test('writes the value into spec.traffic.longRequestP99Seconds, keeping comments and layout', () => {
    const spec = path.join(dir, 'gateway.yaml');
    const original = fs.readFileSync(path.join(REPO_ROOT, 'examples', 'haproxy.yaml'), 'utf8');
    fs.writeFileSync(spec, original);
    const r = measure(['--access-log', sources[0]!.log, '--write', spec]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /wrote spec\.traffic\.longRequestP99Seconds: 2 into .*gateway\.yaml \(was 100\)/);
    const after = fs.readFileSync(spec, 'utf8');
    const changed = after.split('\n').filter((line, i) => line !== original.split('\n')[i]);
    assert.equal(changed.length, 1, `one line changed:\n${changed.join('\n')}`);
    assert.match(changed[0]!, /longRequestP99Seconds: 2\b/);
    assert.equal(after.match(/#/g)?.length, original.match(/#/g)?.length, 'every comment kept');
    assert.equal(runCli(['plan', spec, '--format', 'json']).status, 0, 'the written spec plans');
  });

  test('a spec that would not validate is left as it was, exit 2', () => {
    const spec = path.join(dir, 'broken.yaml');
    const text = fs.readFileSync(path.join(REPO_ROOT, 'examples', 'haproxy.yaml'), 'utf8').replace(/replicas: \d+/, 'replicas: many');
    fs.writeFileSync(spec, text);
    const r = measure(['--access-log', sources[0]!.log, '--write', spec]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /broken\.yaml:\d+: spec\.replicas/);
    assert.equal(fs.readFileSync(spec, 'utf8'), text);
    assert.deepEqual(
      fs.readdirSync(dir).filter((f) => f.includes('.gracegate-')),
      [],
      'no temporary file left',
    );
  });
});
