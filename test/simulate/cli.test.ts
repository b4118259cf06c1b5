import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../support/run-cli';
import type { SimulateReport } from '../../src/simulate/simulate';
import { renderSimulateText } from '../../src/simulate/report-text';

// `gracegate simulate` as a user runs it, on the bundled HAProxy example (drain-first behind
// shutdown-sessions + redispatch), with few runs so the test takes a second.

const BASE = ['simulate', 'examples/haproxy.yaml', '--rps', '100', '--duration-dist', 'lognormal:p50=80ms,p99=2s', '--runs', '20'];

test('--help lists every option, and the command is in gracegate --help', () => {
  const r = runCli(['simulate', '--help']);
  assert.equal(r.status, 0);
  for (const flag of ['--rps', '--duration-dist', '--runs', '--pods', '--random-key', '--connect-time', '--format'])
    assert.match(r.stdout, new RegExp(`${flag}\\b`));
  assert.match(runCli(['--help']).stdout, /^\s+simulate\s+/m);
});

test("text: one row per order, the plan's sequence marked, the causes explained", () => {
  const r = runCli(BASE);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^\* drain-first\s+\d/m);
  for (const order of ['soft-drain', 'health-first', 'article-order', 'naive-503']) assert.match(r.stdout, new RegExp(`^  ${order}\\s+\\d`, 'm'));
  for (const cause of ['refused', 'cut at DOWN', 'cut at exit', 'keep-alive race', 'redispatched']) assert.match(r.stdout, new RegExp(`^  ${cause}: `, 'm'));
  assert.doesNotMatch(r.stdout, /\bseed\b/i);
});

test('json: the same numbers, reproducible by --random-key', () => {
  const a = runCli([...BASE, '--format', 'json', '--random-key', '4']);
  assert.equal(a.status, 0, a.stderr);
  const report = JSON.parse(a.stdout) as SimulateReport;
  assert.equal(report.sequence, 'drain-first');
  assert.deepEqual(
    report.orders.map((o) => o.order),
    ['soft-drain', 'health-first', 'drain-first', 'article-order', 'naive-503'],
  );
  assert.deepEqual(
    report.orders.filter((o) => o.chosen).map((o) => o.order),
    ['drain-first'],
  );
  const drainFirst = report.orders.find((o) => o.order === 'drain-first')!;
  const article = report.orders.find((o) => o.order === 'article-order')!;
  assert.ok(drainFirst.lost.mean < article.lost.mean, 'behind a flushing LB with redispatch, drain-first loses less than the article order');
  assert.equal(runCli([...BASE, '--format', 'json', '--random-key', '4']).stdout, a.stdout);
});

test("without --rps and --duration-dist: the plan's own traffic, the one its orders were ranked by", () => {
  const r = runCli(['simulate', 'examples/f5.yaml', '--runs', '20', '--format', 'json']);
  assert.equal(r.status, 0, r.stderr);
  const report = JSON.parse(r.stdout) as SimulateReport;
  const plan = JSON.parse(runCli(['plan', 'examples/f5.yaml', '--format', 'json']).stdout) as {
    traffic: { requestsPerSecondPerPod: number; requestDurations: string; connectMs: number };
  };
  assert.deepEqual(report.inputs.traffic, { kind: 'poisson', rps: plan.traffic.requestsPerSecondPerPod * report.inputs.pods });
  assert.equal(report.inputs.durations, plan.traffic.requestDurations);
  assert.equal(report.inputs.connectMs, plan.traffic.connectMs);
  assert.match(report.inputs.lbRefused, /reselect-tries 0/, "the legend's refused is the LB's own");
});

test("without --runs, on the bundled example's own heavy traffic: it runs, as many runs as the budget allows, and says so; --runs asks for more and is refused with the most that fits", () => {
  // examples/haproxy.yaml: 800 requests/s per pod and a p99 of 100 s, so a run follows about 850,000 requests.
  // The budget is about 20 s of CPU, more of wall time beside other tests: the bound only guards a hang.
  const r = runCli(['simulate', 'examples/haproxy.yaml', '--format', 'json'], { timeoutMs: 600_000 });
  assert.equal(r.status, 0, r.stderr);
  const report = JSON.parse(r.stdout) as SimulateReport;
  assert.equal(report.inputs.runsFitted, true);
  assert.ok(report.inputs.runs >= 10 && report.inputs.runs < 200, `runs ${report.inputs.runs}`);
  // The text of the same report (rendering is pure: the run is not repeated).
  assert.match(
    renderSimulateText(report),
    new RegExp(
      `^${report.inputs.runs} runs per order \\(random key 1\\), fewer than the default 200: at this traffic the simulator's budget of 20,000,000 requests followed allows ${report.inputs.runs} \\(--runs sets it\\);`,
      'm',
    ),
  );
  const asked = runCli(['simulate', 'examples/haproxy.yaml', '--runs', String(report.inputs.runs + 1)]);
  assert.equal(asked.status, 2);
  assert.match(
    asked.stderr,
    new RegExp(
      `--runs: about [\\d,]+ requests to follow \\(${report.inputs.runs + 1} runs x 5 orders x the traffic over the sequence\\), more than the 20,000,000 the simulator allows: at this traffic at most --runs ${report.inputs.runs}, or lower --rps`,
    ),
  );
  assert.equal(asked.stdout, '');
  // At light traffic nothing is fitted: the default.
  const light = JSON.parse(
    runCli(['simulate', 'examples/haproxy.yaml', '--rps', '10', '--duration-dist', 'fixed:100ms', '--format', 'json']).stdout,
  ) as SimulateReport;
  assert.deepEqual([light.inputs.runs, light.inputs.runsFitted], [200, false]);
});

test('bad input: exit 2, the option named, nothing on stdout', () => {
  const cases: Array<[string[], RegExp]> = [
    [[...BASE.slice(0, 2), '--rps', 'lots', '--duration-dist', 'fixed:1s'], /--rps must be a number/],
    [[...BASE.slice(0, 2), '--rps', '99999', '--duration-dist', 'fixed:1s'], /--rps must be between/],
    [[...BASE.slice(0, 2), '--rps', '10', '--duration-dist', 'fixed:soon'], /--duration-dist: fixed: 'soon' is not a duration/],
    [[...BASE.slice(0, 2), '--rps', '10', '--duration-dist', '0.5*fixed:1s+0.4*fixed:2s'], /--duration-dist: the weights sum to 0.9/],
    [[...BASE, '--runs', '0'], /--runs must be between 1 and/],
    [[...BASE, '--pods', '1'], /--pods must be between 2 and/],
    [[...BASE, '--format', 'yaml'], /--format must be text or json/],
    [[...BASE, '--connect-time', 'slow'], /--connect-time/],
    [['simulate', 'examples/haproxy.yaml', '--rps', '5000', '--duration-dist', 'fixed:60s', '--runs', '2000'], /--runs: about [\d,]+ requests to follow/],
    [['simulate', '--rps', '1', '--duration-dist', 'fixed:1s'], /missing the gateway spec file/],
    [['simulate', 'examples/no-such.yaml', '--rps', '1', '--duration-dist', 'fixed:1s'], /no-such\.yaml/],
  ];
  for (const [args, says] of cases) {
    const r = runCli(args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, says, args.join(' '));
    assert.equal(r.stdout, '', `${args.join(' ')} printed nothing`);
  }
});
