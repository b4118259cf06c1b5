/**
 * Timing fields every vendor refuses beyond its own bounds (issue 37, point 3): before, `inter: 0s`
 * planned a 0 s detection time and lb-config wrote `default-server inter 0s fastinter 0s`, which
 * HAProxy refuses at load. Each field outside the bound its vendor enforces is now refused by the
 * spec's schema in the vendor's terms, with the source (docs/facts.md §3), exit 2, naming the line.
 * HAProxy's bound is checked against the real HAProxy: what gracegate accepts at the edge it loads,
 * what gracegate refuses it refuses.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { freePort } from '../support/ports';
import { REPO_ROOT, runCli } from '../support/run-cli';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gracegate-vendor-bounds-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The example spec of `model` with `field: value` in its loadBalancer block (added at its end when absent). */
function specWith(model: string, field: string, value: string): { file: string; line: number } {
  const text = fs.readFileSync(path.join(REPO_ROOT, 'examples', `${model}.yaml`), 'utf8');
  const lines = text.split('\n');
  const start = lines.findIndex((l) => /^\s+model: /.test(l));
  const indent = /^(\s+)/.exec(lines[start]!)![1]!;
  let at = lines.findIndex((l, i) => i > start && new RegExp(`^${indent}${field}:`).test(l));
  if (at === -1) {
    at = start + 1;
    lines.splice(at, 0, `${indent}${field}: ${value}`);
  } else lines[at] = `${indent}${field}: ${value}`;
  const file = path.join(dir, `${model}-${field}-${value.replace(/[^\w.-]/g, '_')}.yaml`);
  fs.writeFileSync(file, lines.join('\n'));
  return { file, line: at + 1 };
}

function refused(model: string, field: string, value: string, message: string): void {
  const { file, line } = specWith(model, field, value);
  const r = runCli(['plan', file]);
  assert.equal(r.status, 2, `${model} ${field}: ${value}: ${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.ok(r.stderr.includes(`${file}:${line}: spec.loadBalancer.${field}: ${message}`), `${model} ${field}: ${value}:\n${r.stderr}`);
}

function accepted(model: string, field: string, value: string): void {
  const r = runCli(['plan', specWith(model, field, value).file]);
  assert.equal(r.status, 0, `${model} ${field}: ${value}: ${r.stderr}`);
}

test('HAProxy: inter, fastinter, downinter > 0; rise and fall > 0, in an int', () => {
  for (const field of ['inter', 'fastinter', 'downinter']) {
    for (const v of ['0s', '0', '-0']) refused('haproxy', field, v, `HAProxy refuses ${field} 0s: a check interval must be > 0 (HAProxy src/check.c)`);
    accepted('haproxy', field, '1ms');
  }
  for (const field of ['rise', 'fall']) {
    refused('haproxy', field, '0', `HAProxy refuses ${field} 0: '${field}' has to be > 0 (HAProxy src/check.c)`);
    refused(
      'haproxy',
      field,
      '2147483648',
      `HAProxy refuses ${field} 2147483648: it is kept in an int, at most 2147483647 (HAProxy include/haproxy/check-t.h)`,
    );
  }
});

test('HAProxy: the real HAProxy loads what lb-config writes for inter 1ms and refuses the inter 0s gracegate used to write', async () => {
  const port = await freePort();
  const { file } = specWith('haproxy', 'inter', '1ms');
  const out = runCli(['lb-config', file]);
  assert.equal(out.status, 0, out.stderr);
  assert.match(out.stdout, /default-server inter 1ms fastinter 1ms /);
  const config = (backend: string) => {
    const cfg = path.join(dir, 'haproxy.cfg');
    const name = /^backend (\S+)/m.exec(backend)![1]!;
    fs.writeFileSync(
      cfg,
      `defaults\n    timeout connect 1s\n    timeout client 1s\nfrontend f\n    mode http\n    bind 127.0.0.1:${port}\n    default_backend ${name}\n${backend}    server s1 127.0.0.1:9\n`,
    );
    return spawnSync('haproxy', ['-c', '-f', cfg], { encoding: 'utf8', timeout: 30_000 });
  };
  const ok = config(out.stdout);
  assert.equal(ok.status, 0, `${ok.stdout}${ok.stderr}`);
  const zero = config(out.stdout.replace('inter 1ms fastinter 1ms', 'inter 0s fastinter 0s'));
  assert.notEqual(zero.status, 0);
  assert.match(`${zero.stdout}${zero.stderr}`, /invalid value 0 for argument 'inter'/);
});

test('NetScaler: -interval, -resptimeout, -downTime from 1 to their maximum; -retries 1-127, -failureRetries 0-32, -successRetries 1-32', () => {
  refused('citrix', 'interval', '0', 'NetScaler refuses -interval 0: its minimum value is 1 (NITRO lbmonitor)');
  refused('citrix', 'interval', '20940.5s', 'NetScaler refuses -interval 20940500 MSEC: its maximum value is 20940000 (NITRO lbmonitor); give whole seconds');
  accepted('citrix', 'interval', '20940s');
  refused('citrix', 'resptimeout', '0', 'NetScaler refuses -resptimeout 0: its minimum value is 1 (NITRO lbmonitor)');
  refused('citrix', 'downTime', '0s', 'NetScaler refuses -downTime 0: its minimum value is 1 (NITRO lbmonitor)');
  refused('citrix', 'downTime', '20939.5s', 'NetScaler refuses -downTime 20939500 MSEC: its maximum value is 20939000 (NITRO lbmonitor); give whole seconds');
  accepted('citrix', 'downTime', '500ms');
  refused('citrix', 'retries', '128', 'NetScaler refuses -retries 128: its range is 1 to 127 (NITRO lbmonitor)');
  refused('citrix', 'failureRetries', '33', 'NetScaler refuses -failureRetries 33: its range is 0 to 32 (NITRO lbmonitor)');
  refused('citrix', 'successRetries', '0', 'NetScaler refuses -successRetries 0: its range is 1 to 32 (NITRO lbmonitor)');
  accepted('citrix', 'retries', '127');
});

test('F5: interval and timeout at least a second (whole seconds in tmsh)', () => {
  refused('f5', 'interval', '0', 'F5 takes interval in whole seconds (tmsh ltm monitor http: interval [integer]); 0s is no interval: give at least 1s');
  refused('f5', 'timeout', '0s', 'F5 takes timeout in whole seconds (tmsh ltm monitor http: timeout [integer]); 0s is no timeout: give at least 1s');
});

test('NLB: HealthCheckIntervalSeconds 5-300, HealthCheckTimeoutSeconds 2-120, whole seconds; thresholds 2-10', () => {
  const api = '(Elastic Load Balancing API reference, CreateTargetGroup)';
  refused('nlb', 'healthCheckInterval', '4', `AWS refuses HealthCheckIntervalSeconds 4: it is a whole number of seconds from 5 to 300 ${api}`);
  refused('nlb', 'healthCheckInterval', '301', `AWS refuses HealthCheckIntervalSeconds 301: it is a whole number of seconds from 5 to 300 ${api}`);
  refused('nlb', 'healthCheckInterval', '7.5s', `AWS refuses HealthCheckIntervalSeconds 7.5: it is a whole number of seconds from 5 to 300 ${api}`);
  accepted('nlb', 'healthCheckInterval', '5');
  refused('nlb', 'healthCheckTimeout', '1', `AWS refuses HealthCheckTimeoutSeconds 1: it is a whole number of seconds from 2 to 120 ${api}`);
  refused('nlb', 'unhealthyThreshold', '1', `AWS refuses UnhealthyThresholdCount 1: the range is 2 to 10 ${api}`);
  refused('nlb', 'healthyThreshold', '11', `AWS refuses HealthyThresholdCount 11: the range is 2 to 10 ${api}`);
});

test('Envoy: the active health check interval and timeout > 0s', () => {
  const text = fs.readFileSync(path.join(REPO_ROOT, 'examples', 'envoy.yaml'), 'utf8');
  const line = text.split('\n').findIndex((l) => /^\s+interval: 2s/.test(l)) + 1;
  const file = path.join(dir, 'envoy-interval-0.yaml');
  fs.writeFileSync(file, text.replace(/^(\s+)interval: 2s/m, '$1interval: 0s'));
  const r = runCli(['plan', file]);
  assert.equal(r.status, 2, r.stderr);
  assert.ok(
    r.stderr.includes(
      `${file}:${line}: spec.loadBalancer.activeHealthCheck.interval: Envoy refuses health_check interval 0s: value must be greater than 0s (Envoy api/envoy/config/core/v3/health_check.proto)`,
    ),
    r.stderr,
  );
});
