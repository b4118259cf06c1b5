/** Envoy's version string and the drain calls the sidecar picks for it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { drainProfileFor, formatVersion, parseEnvoyVersion, statsGaugesOnly } from '../../src/hc/envoy-version';
import { pinnedEnvoys } from '../support/real-envoy';

test('parses /server_info versions, release, Istio-built and dev builds alike', () => {
  const cases: [string, string | null][] = [
    ['bad8280de85c25b147a90c1d9b8a8c67a13e7134/1.36.4/Clean/RELEASE/BoringSSL', '1.36.4'],
    ['5952f5fb5f85f495ac6d0925539dcd445cd618a0/1.18.3/Clean/RELEASE/BoringSSL', '1.18.3'],
    ['2906d870a2bd061a4f1b0aece1a6409a595771ad/1.7.0-dev/Clean/DEBUG/BoringSSL', '1.7.0'],
    ['0/1.35.3-dev//RELEASE', '1.35.3'],
    ['standin/1.40.0/Clean/RELEASE/BoringSSL', '1.40.0'],
    ['', null],
    ['garbage', null],
    ['abc/v1.36/Clean', null],
  ];
  for (const [input, expected] of cases) {
    const v = parseEnvoyVersion(input);
    assert.equal(v === null ? null : formatVersion(v), expected, input);
  }
});

test('every version gets plain then graceful; measured rows say so, the rest say fallback', () => {
  for (const v of ['1.40.0', '1.41.2', '2.0.0']) {
    const p = drainProfileFor(parseEnvoyVersion(`x/${v}/`));
    assert.deepEqual([p.calls, p.basis], [['/drain_listeners', '/drain_listeners?graceful'], 'measured'], v);
    assert.match(p.why, /1\.40\.0.*PR #47042/);
  }
  for (const v of ['1.16.0', '1.35.3', '1.36.4', '1.39.9']) {
    const p = drainProfileFor(parseEnvoyVersion(`x/${v}/`));
    assert.deepEqual([p.calls, p.basis], [['/drain_listeners', '/drain_listeners?graceful'], 'measured'], v);
    assert.match(p.why, /1\.36\.4/);
  }
  const old = drainProfileFor(parseEnvoyVersion('x/1.15.9/'));
  assert.equal(old.basis, 'fallback');
  assert.match(old.why, /older than 1\.16/);
  const unknown = drainProfileFor(null);
  assert.deepEqual([unknown.calls, unknown.basis], [['/drain_listeners', '/drain_listeners?graceful'], 'fallback']);
  assert.match(unknown.why, /version unknown/);
});

test('each pinned real Envoy falls in a measured row', () => {
  for (const pinned of pinnedEnvoys()) assert.equal(drainProfileFor(parseEnvoyVersion(`x/${pinned.version}/`)).basis, 'measured', pinned.version);
});

test('stats polls ask for gauges only from Envoy 1.22 (type=Gauges); older or unknown versions get the plain query', () => {
  assert.equal(statsGaugesOnly(parseEnvoyVersion('x/1.22.0/')), true);
  assert.equal(statsGaugesOnly(parseEnvoyVersion('x/1.36.4/')), true);
  assert.equal(statsGaugesOnly(parseEnvoyVersion('x/1.21.9/')), false);
  assert.equal(statsGaugesOnly(null), false);
});
