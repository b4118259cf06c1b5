import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { renderLbConfig } from '../../src/lb-config';
import { planGateway } from '../../src/plan/plan-gateway';
import { resolved } from '../support/spec-builder';
import { runCli } from '../support/run-cli';
import { manifestsYaml } from '../../src/delivery/manifests';
import { renderPlanMarkdown } from '../../src/emit/plan-markdown';
import { extraObjects } from '../../src/pod/extra-objects';
import { example, yamlDocs } from '../emit/helpers';
import { testDir } from '../support/tmp';

function render(lb: Record<string, unknown>, extra: Record<string, unknown> = {}, servers = [{ host: '10.0.0.1', port: 30080 }]): string {
  const r = resolved({ spec: { loadBalancer: lb, ...extra } });
  return renderLbConfig({ plan: planGateway(r), servers });
}

/** Every non-empty, non-comment line carries a reason: trailing `# …`, or a `# …` line right above it. */
function assertEveryLineExplained(text: string, style: 'trailing' | 'leading'): void {
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const t = line.trim();
    if (t === '' || t.startsWith('#') || t === 'metadata:' || t === 'annotations:') return;
    if (style === 'trailing' && !/^backend /.test(t)) assert.match(line, /\S\s+# \S/, `line ${i + 1} has no reason: ${line}`);
    if (style === 'leading') assert.match(lines[i - 1]!.trim(), /^# \S/, `line ${i + 1} has no reason above it: ${line}`);
  });
}

test('haproxy drain-first: redispatch, shutdown-sessions, detection parameters and probe port, each explained', () => {
  const text = render({ model: 'haproxy', inter: '2s', fall: 2, onMarkedDown: 'shutdown-sessions', redispatch: true });
  assert.match(text, /^backend igw$/m);
  assert.match(text, /option httpchk GET \/health_check\.html\s+#/);
  assert.match(
    text,
    /^\s+option redispatch\s+# drain-first needs a refused connect re-sent to another server \(only connects under way at DOWN are still cut/m,
  );
  assert.match(text, /default-server inter 2s fastinter 2s fall 2\s+# detection <= inter \+ \(fall - 1\) x fastinter = 4s/);
  assert.match(text, /default-server on-marked-down shutdown-sessions/);
  assert.match(text, /default-server port 30180/);
  assert.match(text, /server gw-1 10\.0\.0\.1:30080\s+# gateway pod/);
  assert.doesNotMatch(text, /^\s+http-check disable-on-404/m, 'not configured: only named as the fix for the connect race');
  assert.match(text, /^# INFO drain-first-cuts-connects-at-down: /m);
  assert.doesNotMatch(text, /^\s+retry-on/m, 'no L7 retries unless the spec says the LB has them');
  assert.match(
    text,
    /^\s+option http-server-close\s+# drain-first: a new connection to the pod per request, .*; cost: one TCP connect to the pod per request/m,
  );
  assert.doesNotMatch(
    text,
    /keepalive-race-not-retried|drain-first-connection-reuse/,
    'no connection to the pod is reused: neither the race nor the one-more-request window',
  );
  assert.match(
    text,
    /^# INFO drain-first-listener-close-reset: drain-first stops the pod's listeners at the drain/m,
    'the reset at the listener close is still predicted',
  );
  assert.match(text, /^# plan: drain-first; .*drain timeout 120s$/m, 'ceil(1.2 x p99): one request per connection');
  assertEveryLineExplained(text, 'trailing');
});

test('haproxy drain-first keeping its connections alive (httpServerClose: false): the drain timeout waits for two requests, and both findings say why', () => {
  const text = render({ model: 'haproxy', inter: '2s', fall: 2, onMarkedDown: 'shutdown-sessions', redispatch: true, httpServerClose: false });
  assert.match(text, /^# plan: drain-first; .*drain timeout 240s$/m, 'ceil(1.2 x 2 x p99)');
  assert.match(
    text,
    /^\s+option http-keep-alive\s+# connections to the pod are reused \(httpServerClose: false\): each can carry one more request after the drain, so the drain timeout waits for two \(max\(ceil\(1\.2 x requestsPerConnection x longRequestP99Seconds\), ceil\(2 x pollInterval\)\) = 240s\)/m,
  );
  assert.doesNotMatch(text, /^\s+option http-server-close/m);
  assert.match(text, /^# WARNING drain-first-connection-reuse: HAProxy keeps its connections to the pod alive/m);
  assert.match(text, /^# INFO keepalive-race-not-retried: /m);
  assertEveryLineExplained(text, 'trailing');
});

test('haproxy retryOnEmptyResponse: GET-only L7 retries on an empty response, each line explained, and the finding gone', () => {
  const text = render({
    model: 'haproxy',
    inter: '2s',
    fall: 2,
    onMarkedDown: 'shutdown-sessions',
    redispatch: true,
    retryOnEmptyResponse: true,
    httpServerClose: false,
  });
  assert.match(text, /^\s+retry-on conn-failure empty-response\s+# a GET that meets the keep-alive race/m);
  assert.match(text, /^\s+http-request disable-l7-retry unless METH_GET\s+# only GET and HEAD are replayed/m);
  assert.doesNotMatch(text, /keepalive-race-not-retried|drain-first-listener-close-reset/);
  assertEveryLineExplained(text, 'trailing');
});

test('haproxy soft-drain adds disable-on-404; health-first says it relies on sessions surviving DOWN', () => {
  const soft = render({ model: 'haproxy', inter: '1s', fall: 3, onMarkedDown: 'shutdown-sessions', disableOn404: true });
  assert.match(soft, /plan: soft-drain/);
  assert.match(soft, /http-check disable-on-404\s+# soft-drain/);
  const hf = render({ model: 'haproxy', inter: '200ms', fall: 2 });
  assert.match(hf, /plan: health-first/);
  assert.match(hf, /default-server inter 200ms fastinter 200ms fall 2/);
  assert.doesNotMatch(hf, /default-server on-marked-down/);
  assert.match(hf, /# no on-marked-down: health-first relies on HAProxy keeping live sessions/);
});

test('haproxy without redispatch says so and carries the finding the harness checks', () => {
  const text = render({ model: 'haproxy', inter: '2s', fall: 2, onMarkedDown: 'shutdown-sessions', redispatch: false }, { sequence: 'drain-first' });
  assert.match(text, /no option redispatch\s+# plan assumes refused connects are NOT re-sent/);
  assert.match(text, /# ERROR drain-first-without-redispatch:/);
});

test('where the plan expects a loss, each LB setting that removes it is an option with the loss it removes', () => {
  // F5 with service-down-action reset and no reselect: every order loses (issue 48's example).
  const text = render({ model: 'f5', interval: '5s', timeout: '16s', serviceDownAction: 'reset' });
  assert.match(text, /^# expected requests lost per pod termination \(100 requests\/s per pod, [^)]+\): soft-drain not runnable, \*health-first \d+/m);
  assert.match(
    text,
    /^# option: monitor recv-disable \(soft-drain\): the plan would run soft-drain, expected to lose 0\.00 requests per pod termination instead of \d+ \(\d+ fewer\); in the spec: spec\.loadBalancer\.recvDisable/m,
  );
  assert.match(text, /^#   modify ltm monitor http igw-hc recv-disable "gracegate-soft-drain"$/m);
  assert.match(text, /^# option: service-down-action none \(health-first\).*\n#   modify ltm pool igw service-down-action none$/m);
  assert.match(
    text,
    /^# option: pool reselect-tries 1 \(refused connections re-sent\): the plan would run drain-first.*\n#   modify ltm pool igw reselect-tries 1$/m,
  );
  // A plan that loses nothing has no options.
  assert.doesNotMatch(render({ model: 'f5', serviceDownAction: 'none' }), /# option:/);
});

test('haproxy: a per-server check port overrides the health port; no servers prints a placeholder', () => {
  const r = resolved();
  const plan = planGateway(r);
  const text = renderLbConfig({ plan, backendName: 'be', servers: [{ host: '127.0.0.1', port: 4000, checkPort: 4001 }] });
  assert.match(text, /^backend be$/m);
  assert.match(text, /server gw-1 127\.0\.0\.1:4000 port 4001/);
  assert.match(renderLbConfig({ plan }), /# server gw-<n> <node-ip>:<traffic node port>/);
});

test('the generated HAProxy backend is accepted by the real haproxy -c', () => {
  assert.equal(spawnSync('haproxy', ['-v']).status, 0, 'haproxy is installed (scripts/prepare-test-env.sh installs it)');
  const dir = testDir('gracegate-lbcfg-');
  for (const lb of [
    { model: 'haproxy', inter: '2s', fall: 2, onMarkedDown: 'shutdown-sessions', redispatch: true },
    { model: 'haproxy', inter: '150ms', fall: 2, disableOn404: true },
    { model: 'haproxy', retries: 0 },
    { model: 'haproxy', onMarkedDown: 'shutdown-sessions', redispatch: true, retryOnEmptyResponse: true },
    { model: 'haproxy', onMarkedDown: 'shutdown-sessions', redispatch: true, httpServerClose: false },
    { model: 'haproxy', inter: '200ms', fall: 2, httpServerClose: true },
  ]) {
    const backend = render(lb, {}, [
      { host: '127.0.0.1', port: 30080 },
      { host: '127.0.0.1', port: 30081 },
    ]);
    const cfg = join(dir, 'h.cfg');
    writeFileSync(
      cfg,
      `defaults\n  mode http\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\nfrontend f\n  bind 127.0.0.1:1\n  default_backend igw\n${backend}`,
    );
    const r = spawnSync('haproxy', ['-c', '-f', cfg], { encoding: 'utf8', timeout: 10_000 });
    assert.equal(r.status, 0, `${JSON.stringify(lb)}\n${r.stdout}${r.stderr}`);
  }
});

test('citrix drain-first: maxReq 0 (the default) is named as the reuse the drain timeout waits for; maxReq 1 is written with its reason', () => {
  const reuse = render({ model: 'citrix', retryOnReset: true });
  assert.match(reuse, /^# plan: drain-first; .*drain timeout 240s$/m);
  assert.match(reuse, /^# -maxReq 0 \(NetScaler's default\): connections to the pod are reused, each can carry one more request after the drain/m);
  assert.match(reuse, /^# WARNING drain-first-connection-reuse: NetScaler reuses its connections to the pod/m);
  const one = render({ model: 'citrix', maxReq: 1, retryOnReset: true });
  assert.match(one, /^# plan: drain-first; .*drain timeout 120s$/m);
  assert.match(one, /^# a new connection to the pod per request: none carries a request past the drain \(CTX135155\)[^\n]*\nset serviceGroup igw -maxReq 1$/m);
  assert.doesNotMatch(one, /drain-first-connection-reuse/);
  assertEveryLineExplained(one, 'leading');
});

test('citrix: monitor with detection parameters, TROFS code for soft-drain, downStateFlush; each command explained', () => {
  const text = render({ model: 'citrix', interval: '5s', resptimeout: '2s', retries: 3, trofsCode: 299 });
  assert.match(
    text,
    /^add lb monitor igw-hc HTTP -httpRequest "GET \/health_check\.html" -customHeaders "Host: igw\\r\\n" -destPort 30180 -interval 5 -resptimeout 2 -downTime 30 -trofsCode 299$/m,
  );
  assert.match(text, /^set lb monitor igw-hc HTTP -retries 3 -failureRetries 0$/m);
  assert.match(text, /^set lb monitor igw-hc HTTP -successRetries 1$/m);
  assert.doesNotMatch(text, /^set lb monitor .*-trofs/m, 'NetScaler refuses TROFS on a monitor added without it');
  assert.match(text, /^set serviceGroup igw -downStateFlush ENABLED$/m);
  const commands = text.split('\n').filter((l) => /^[a-z]/.test(l));
  const created = commands.indexOf('add serviceGroup igw HTTP');
  assert.ok(created >= 0, 'the script creates the service group it binds');
  assert.ok(
    commands.every((c, i) => !/^(set|bind) serviceGroup igw /.test(c) || i > created),
    'before setting or binding it',
  );
  assert.match(text, /^bind serviceGroup igw 10\.0\.0\.1 30080$/m);
  assertEveryLineExplained(text, 'leading');
  // CLI syntax `-interval <integer> [<units>]` (units1..4 are NITRO field names, not CLI flags), and
  // every time with its unit on the add line, where the unit is fixed (NetScaler command reference).
  const ms = render({ model: 'citrix', interval: '500ms', resptimeout: '200ms', downTime: '500ms', downStateFlush: 'DISABLED' });
  assert.match(ms, /^add lb monitor igw-hc HTTP .* -interval 500 MSEC -resptimeout 200 MSEC -downTime 500 MSEC$/m);
  assert.doesNotMatch(ms, /-units\d/);
  assert.doesNotMatch(ms, /^set lb monitor .*(-interval|-resptimeout|-downTime)/m);
  const mixed = render({ model: 'citrix', interval: '1500ms', resptimeout: '1s' });
  assert.match(mixed, /^add lb monitor .* -interval 1500 MSEC -resptimeout 1 -downTime 30$/m);
  assert.match(ms, /-downStateFlush DISABLED/);
  const ecv = render({ model: 'citrix', trofsString: 'MAINT' });
  assert.match(
    ecv,
    /^add lb monitor igw-hc HTTP-ECV -send "GET \/health_check\.html" -customHeaders "Host: igw\\r\\n" -destPort 30180 -interval 5 -resptimeout 2 -downTime 30 -trofsString "MAINT"$/m,
  );
  assert.doesNotMatch(ecv, /^set lb monitor .*-trofs/m);
  const sticky = render({ model: 'citrix', trofsCode: 299, persistenceType: 'COOKIEINSERT' });
  assert.match(sticky, /^# set lb vserver <the gateway's vserver> -trofsPersistence ENABLED .*citrix-trofs-keeps-persistent-clients/m);
  assert.match(sticky, /^# WARNING citrix-trofs-keeps-persistent-clients: /m);
  const plain = render({ model: 'citrix' });
  assert.doesNotMatch(plain, /^[a-z].*-trofs/m, 'no TROFS command unless the spec has a TROFS code or string');
});

test('f5: recv-disable soft-drain uses a recv that does not also match the signal; service-down-action', () => {
  const soft = render({ model: 'f5', recvDisable: 'DRAINING-SOFT', serviceDownAction: 'reset' });
  assert.match(soft, /^modify ltm monitor http igw-hc recv "OPEN"$/m);
  assert.match(soft, /^modify ltm monitor http igw-hc recv-disable "DRAINING-SOFT"$/m);
  assert.match(soft, /^modify ltm pool igw service-down-action reset$/m);
  assert.match(soft, /^modify ltm monitor http igw-hc interval 5 timeout 16$/m);
  assert.match(soft, /^modify ltm pool igw slow-ramp-time 10$/m);
  assert.match(soft, /^# a new pod ramps up to its share over this time: recovery ~ interval \+ slowRampTime = 15s/m);
  assertEveryLineExplained(soft, 'leading');
  const plain = render({ model: 'f5' });
  // F5 searches recv, a regular expression, in the whole response, headers and body.
  const recv = new RegExp(/^modify ltm monitor http igw-hc recv "(.*)"$/m.exec(plain)![1]!);
  assert.ok(recv.test('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nOPEN'));
  assert.ok(!recv.test('HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n\r\nDRAINING (was 200 OK)'), 'a 503 never passes');
  assert.ok(!recv.test('HTTP/1.1 503 Service Unavailable\r\nx-upstream: 200 OK\r\n\r\n'), 'nor a header that says 200 OK');
  assert.doesNotMatch(plain, /recv-disable/);
});

test('nlb: annotations for ip targets point the probe at the sidecar and set the termination attributes', () => {
  const text = render({ model: 'nlb', targetType: 'ip', unhealthyConnectionTermination: false }, { health: { exposure: 'clusterIP', port: 18180 } });
  assert.match(text, /aws-load-balancer-nlb-target-type: ip$/m);
  assert.match(text, /aws-load-balancer-healthcheck-port: "18180"$/m);
  assert.match(text, /aws-load-balancer-healthcheck-path: \/health_check\.html$/m);
  assert.match(text, /target_health_state\.unhealthy\.connection_termination\.enabled=false(,|$)/m);
  assertEveryLineExplained(text, 'leading');
  const inst = render({ model: 'nlb' });
  assert.doesNotMatch(inst, /healthcheck-path/);
  assert.match(inst, /nlb-instance-probe-bypasses-sidecar/);
});

test('lb-config CLI: prints the vendor section; bad --servers is a usage error (exit 2)', () => {
  const ok = runCli(['lb-config', 'examples/haproxy.yaml', '--servers', '127.0.0.1:8080@9090,[::1]:8081', '--backend-name', 'gw']);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /^backend gw$/m);
  assert.match(ok.stdout, /server gw-1 127\.0\.0\.1:8080 port 9090/);
  assert.match(ok.stdout, /server gw-2 \[::1\]:8081\s/);
  for (const bad of [
    ['--servers', 'nohost'],
    ['--servers', 'h:70000'],
    ['--backend-name', 'a b'],
  ]) {
    const r = runCli(['lb-config', 'examples/haproxy.yaml', ...bad]);
    assert.equal(r.status, 2, bad.join(' '));
    // The option that is wrong, its own usage line, and where the rest is (not the whole help).
    assert.match(r.stderr, new RegExp(`^gracegate lb-config: ${bad[0]}[: ]`));
    assert.match(r.stderr, new RegExp(`^  ${bad[0]} `, 'm'));
    assert.match(r.stderr, /Run 'gracegate help lb-config' for every option/);
  }
  assert.equal(runCli(['lb-config']).status, 2);
  for (const f of ['citrix', 'f5', 'nlb', 'envoy', 'haproxy-soft-drain']) assert.equal(runCli(['lb-config', `examples/${f}.yaml`]).status, 0, f);
});

test("nlb ip targets: the controller's pod readiness gate, as a namespace label in every output that can say it", () => {
  const label = 'elbv2.k8s.aws/pod-readiness-gate-inject';
  const ip = render({ model: 'nlb', targetType: 'ip', unhealthyConnectionTermination: false }, { health: { exposure: 'clusterIP', port: 18180 } });
  assert.match(ip, new RegExp(`^# kubectl label namespace istio-ingress ${label}=enabled$`, 'm'));
  assert.match(ip, /aws-load-balancer-controller#1834/);
  assert.doesNotMatch(render({ model: 'nlb' }), new RegExp(label), 'instance targets: the node is the target, no gate');
  assert.doesNotMatch(
    render({ model: 'nlb', targetType: 'ip', podReadinessGate: false }, { health: { exposure: 'clusterIP' } }),
    new RegExp(`kubectl label.*${label}`),
  );

  const { changes } = example('nlb.yaml');
  assert.deepEqual(changes.namespaceLabels, { [label]: 'enabled' });
  assert.deepEqual(example('haproxy.yaml').changes.namespaceLabels, {});
  const ns = yamlDocs(manifestsYaml(changes)).find((o) => o.kind === 'Namespace')!;
  assert.deepEqual(ns, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'istio-ingress', labels: { [label]: 'enabled' } } });
  assert.ok(!extraObjects(changes).some((o) => o.kind === 'Namespace'), 'a Helm release or Kustomize overlay never owns its namespace');
  assert.match(renderPlanMarkdown(example('nlb.yaml').plan, changes), new RegExp(`kubectl label namespace istio-ingress ${label}=enabled`));
  const pr = runCli(['post-render', '--spec', 'examples/nlb.yaml'], { input: '' });
  assert.match(pr.stderr, new RegExp(`note: label the namespace: kubectl label namespace istio-ingress ${label}=enabled`));

  const off = planGateway(resolved({ spec: { loadBalancer: { model: 'nlb', targetType: 'ip', podReadinessGate: false }, health: { exposure: 'clusterIP' } } }));
  const f = off.findings.find((x) => x.id === 'nlb-no-readiness-gate');
  assert.ok(f);
  assert.match(f.remediation, /podReadinessGate: true/);
  assert.ok(
    !planGateway(resolved({ spec: { loadBalancer: { model: 'nlb', targetType: 'ip' }, health: { exposure: 'clusterIP' } } })).findings.some(
      (x) => x.id === 'nlb-no-readiness-gate',
    ),
  );
});

test('nlb without unhealthy connection termination: the draining interval is set to cover the whole sequence, not left at 0', () => {
  const r = resolved({ spec: { loadBalancer: { model: 'nlb', targetType: 'ip', unhealthyConnectionTermination: false }, health: { exposure: 'clusterIP' } } });
  const plan = planGateway(r);
  const attributes = (text: string) => /aws-load-balancer-target-group-attributes: (.*)$/m.exec(text)![1]!.split(',');
  const kept = attributes(renderLbConfig({ plan }));
  assert.ok(kept.includes(`target_health_state.unhealthy.draining_interval_seconds=${Math.ceil(plan.timings.sequenceSeconds)}`), kept.join(','));
  assert.equal(plan.sequence, 'health-first');
  const reset = attributes(render({ model: 'nlb', targetType: 'ip' }, { health: { exposure: 'clusterIP' } }));
  assert.ok(!reset.some((a) => a.includes('draining_interval_seconds')), 'with termination on, AWS ignores it: not written');
});

test("envoy: no_traffic_interval is the interval, so detection does not wait for a cold cluster; the healthy threshold is the spec's", () => {
  const text = render({ model: 'envoy', activeHealthCheck: { interval: '2s', healthyThreshold: 3 } }, { health: { exposure: 'clusterIP' } });
  assert.match(text, /^ {2}no_traffic_interval: 2s\s+# = interval: .*Envoy's default is 60 s/m);
  assert.match(text, /^ {2}healthy_threshold: 3\s+# recovery only: \(interval \+ intervalJitter\) x healthyThreshold = 6s/m);
  assertEveryLineExplained(text, 'trailing');
  const plan = planGateway(resolved({ spec: { loadBalancer: { model: 'envoy', activeHealthCheck: { interval: '2s' } }, health: { exposure: 'clusterIP' } } }));
  assert.match(plan.derivations.lbDetectSeconds.formula, /no_traffic_interval = interval/);
});
