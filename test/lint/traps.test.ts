import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failing } from '../../src/lint/lint';
import { LINT_RULES, UNKNOWN_IGNORE_RULE } from '../../src/lint/registry';
import { walkFixes } from './fix-walk';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { planGateway } from '../../src/plan/plan-gateway';
import { parseGatewaySpec } from '../../src/schema/parse-spec';
import { REPO_ROOT } from '../support/repo';
import { lintText, optionsOf, traps } from './helpers';

/**
 * Every rule on its minimal manifest (test/lint/traps/<rule>.yaml): exactly the marked findings,
 * each on the marked line, and nothing else. (test/lint/cli.test.ts runs some through the CLI.)
 */
describe('gracegate lint: each rule on a minimal manifest', () => {
  const all = traps();

  it('every rule has its trap manifest (plan-mismatch: test/lint/charts.test.ts, on the real charts)', () => {
    const have = new Set(all.map((t) => t.rule));
    const missing = [...LINT_RULES, UNKNOWN_IGNORE_RULE].map((r) => r.id).filter((id) => id !== 'plan-mismatch' && !have.has(id));
    assert.deepEqual(missing, []);
  });

  for (const trap of all) {
    it(`${trap.rule}: found on the marked line, alone, with its numbers and fix words`, () => {
      const report = lintText(trap.text, trap.file, optionsOf(trap.flags));
      assert.deepEqual(
        report.findings.map((f) => ({ rule: f.rule, line: f.line })).sort((a, b) => a.line - b.line),
        trap.expected,
      );
      for (const f of report.findings) {
        assert.equal(f.file, trap.file);
        assert.match(f.object, /^[A-Za-z]+\/[a-z0-9-]+\/[a-z0-9-]+$/);
        assert.ok(f.message.length > 20 && f.remediation.length > 10);
        for (const [name, n] of Object.entries(f.numbers ?? {})) assert.ok(n.source.length > 0, `${name} has no source`);
      }
      const own = report.findings.find((f) => f.rule === trap.rule)!;
      assert.equal(failing(report, own.severity).length, report.findings.length);
    });
  }
});

describe('gracegate lint: rule details', () => {
  it("autoscale-min-one is the planner's rule: the same id and the same words for the same HPA", () => {
    const trap = traps().find((t) => t.rule === 'autoscale-min-one')!;
    const linted = lintText(trap.text, 'x.yaml', optionsOf(trap.flags)).findings.find((f) => f.rule === 'autoscale-min-one')!;
    const spec = readFileSync(join(REPO_ROOT, 'examples', 'haproxy-autoscaled.yaml'), 'utf8').replace(/minReplicas: \d+/, 'minReplicas: 1');
    const planned = planGateway(parseGatewaySpec(spec, 'haproxy-autoscaled.yaml')).findings.find((f) => f.id === 'autoscale-min-one')!;
    assert.equal(linted.message, planned.message);
    assert.equal(linted.remediation, planned.remediation);
    assert.equal(linted.severity, planned.severity);
    assert.deepEqual(linted.fix!.edits, [{ object: 'HorizontalPodAutoscaler/ingress/gw', path: ['spec', 'minReplicas'], set: 2 }]);
  });

  it('pdb-missing and replicas-may-share-node need more than one pod: a gateway of one replica, or a hostPort, has neither', () => {
    const trap = traps().find((t) => t.rule === 'replicas-may-share-node')!;
    const rules = (text: string) => lintText(text, 'x.yaml', optionsOf(trap.flags)).findings.map((f) => f.rule);
    assert.deepEqual(rules(trap.text.replace('replicas: 2', 'replicas: 1')), []);
    const hostPort = trap.text.replace('image: auto', 'image: auto\n          ports: [{containerPort: 8080, hostPort: 8080}]');
    assert.deepEqual(rules(hostPort), []);
    const spread = trap.text.replace(
      'terminationGracePeriodSeconds: 60',
      'terminationGracePeriodSeconds: 60\n      topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: gw}}}]',
    );
    assert.deepEqual(rules(spread), []);
    const noBudget = trap.text.slice(0, trap.text.indexOf('---'));
    assert.deepEqual(rules(noBudget).sort(), ['pdb-missing', 'replicas-may-share-node']);
  });

  it('grace-period-short names each term of its formula and the fix keeps the 30 s margin', () => {
    const trap = traps().find((t) => t.rule === 'grace-period-short')!;
    const f = lintText(trap.text, 'x.yaml', optionsOf(trap.flags)).findings[0]!;
    assert.equal(f.formula, 'terminationGracePeriodSeconds >= preStopSleep + terminationDrainDuration');
    assert.equal(f.numbers!.preStopSleep!.value, 60);
    assert.equal(f.numbers!.terminationDrainDuration!.value, 5);
    assert.deepEqual(f.fix!.edits, [{ object: 'Deployment/ingress/gw', path: ['spec', 'template', 'spec', 'terminationGracePeriodSeconds'], set: 95 }]);
  });

  it('an EXIT_ON_ZERO proxy counts its minimum drain, and Istio settings come from the annotation before the mesh config', () => {
    const trap = traps().find((t) => t.rule === 'grace-period-short')!;
    const text = trap.text
      .replace('image: auto', 'image: auto\n          env: [{name: MINIMUM_DRAIN_DURATION, value: "20s"}]')
      .replace(
        'metadata: {labels: {app: gw}}',
        'metadata:\n      labels: {app: gw}\n      annotations: {proxy.istio.io/config: \'proxyMetadata: {EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true"}\'}',
      );
    const f = lintText(text, 'x.yaml', optionsOf(trap.flags)).findings.find((x) => x.rule === 'grace-period-short')!;
    assert.equal(f.numbers!.minimumDrainDuration!.value, 20);
    const mesh = `---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio, namespace: istio-system}\ndata:\n  mesh: |\n    defaultConfig:\n      terminationDrainDuration: 1m\n`;
    const viaMesh = lintText(trap.text + mesh, 'x.yaml', optionsOf(trap.flags)).findings.find((x) => x.rule === 'grace-period-short')!;
    assert.equal(viaMesh.numbers!.terminationDrainDuration!.value, 60);
    assert.match(viaMesh.numbers!.terminationDrainDuration!.source, /mesh config defaultConfig \(ConfigMap\/istio-system\/istio\)/);
  });

  it('prestop-exec-sleep is a warning only where the image shows it has no shell', () => {
    const trap = traps().find((t) => t.rule === 'prestop-exec-sleep')!;
    assert.equal(lintText(trap.text, 'x.yaml').findings[0]!.severity, 'warning');
    const withShell = lintText(trap.text.replace('gcr.io/distroless/static-debian12:nonroot', 'debian:12'), 'x.yaml').findings[0]!;
    assert.equal(withShell.severity, 'info');
  });

  it('the rollout rules resolve percentages as the Deployment controller does', () => {
    const trap = traps().find((t) => t.rule === 'rollout-surge-deadlock')!;
    // 25% of 3 replicas: surge rounds up to 1, unavailable down to 0: still the deadlock.
    const pct = trap.text.replace('{maxSurge: 1, maxUnavailable: 0}', "{maxSurge: '25%', maxUnavailable: '25%'}");
    assert.deepEqual(
      lintText(pct, 'x.yaml', optionsOf(trap.flags)).findings.map((f) => f.rule),
      ['rollout-surge-deadlock'],
    );
    // A spare node: no deadlock.
    assert.deepEqual(lintText(trap.text, 'x.yaml', optionsOf(['--nodes', '4'])).findings, []);
    // Without the node count the rule cannot say.
    assert.deepEqual(lintText(trap.text, 'x.yaml').findings, []);
  });

  it('health-probe-bypasses-pod reads the target type from the Service, or from --lb when it says nothing', () => {
    const trap = traps().find((t) => t.rule === 'health-probe-bypasses-pod')!;
    const ip = trap.text.replace('nlb-target-type: instance', 'nlb-target-type: ip');
    assert.deepEqual(
      lintText(ip, 'x.yaml', optionsOf(trap.flags)).findings.map((f) => f.rule),
      [],
    );
    const bare = trap.text.replace(/ {4}service\.beta[^\n]*\n/g, '').replace('  annotations:  # expect: health-probe-bypasses-pod\n', '');
    assert.deepEqual(
      lintText(bare, 'x.yaml', optionsOf(trap.flags)).findings.map((f) => f.rule),
      ['health-probe-bypasses-pod'],
    );
    assert.deepEqual(
      lintText(bare, 'x.yaml', optionsOf(['--lb', 'nlb,targetType=ip'])).findings.map((f) => f.rule),
      ['proxy-hold-below-lb-detection'],
    );
  });

  it('pdb-blocks-eviction also finds maxUnavailable 0 and a minAvailable of every pod', () => {
    const base = traps()
      .find((t) => t.rule === 'pdb-blocks-eviction')!
      .text.split('---\n');
    const one = (spec: string) => `${base[0]}---\n${base[1]!.replace('maxUnavailable: 1', spec)}`;
    assert.deepEqual(
      lintText(one('maxUnavailable: 0'), 'x.yaml').findings.map((f) => f.field),
      ['spec.maxUnavailable'],
    );
    assert.deepEqual(
      lintText(one("minAvailable: '100%'"), 'x.yaml').findings.map((f) => f.field),
      ['spec.minAvailable'],
    );
    assert.deepEqual(lintText(one('maxUnavailable: 1'), 'x.yaml').findings, []);
  });

  it("a pod's own sidecar.istio.io/statsInclusionSuffixes wins over proxyStatsMatcher (Istio ignores the latter): the missing suffixes are found there, and fixed there", () => {
    const trap = traps().find((t) => t.rule === 'hc-stats-matcher-no-connections')!;
    const both = trap.text.replace(
      '"inclusionSuffixes": ["downstream_rq_active"]}}\'  # expect: hc-stats-matcher-no-connections',
      '"inclusionSuffixes": ["downstream_rq_active", "downstream_cx_active"]}}\'',
    );
    assert.deepEqual(lintText(both, 'x.yaml').findings, [], 'proxyStatsMatcher has both: clean');
    const overridden = both.replace('      annotations:\n', "      annotations:\n        sidecar.istio.io/statsInclusionSuffixes: 'upstream_rq_retry'\n");
    const findings = lintText(overridden, 'x.yaml').findings;
    assert.deepEqual(findings.map((f) => f.rule).sort(), ['hc-stats-matcher-missing', 'hc-stats-matcher-no-connections']);
    for (const f of findings) {
      assert.equal(f.field, 'spec.template.metadata.annotations.sidecar.istio.io/statsInclusionSuffixes');
      assert.match(
        f.message,
        /sidecar\.istio\.io\/statsInclusionSuffixes annotation \(which Istio uses instead of proxyStatsMatcher\.inclusionSuffixes\) does not list it/,
      );
      assert.equal(f.fix!.edits[0]!.path.at(-1), 'sidecar.istio.io/statsInclusionSuffixes');
    }
    assert.ok(walkFixes(overridden, optionsOf([])) >= 2, 'each fix, and both in turn, end clean without a circle');
    assert.deepEqual(
      lintText(overridden.replace("'upstream_rq_retry'", "'upstream_rq_retry,downstream_rq_active,downstream_cx_active'"), 'x.yaml').findings,
      [],
    );
  });

  it('a native sidecar (an init container with restartPolicy Always) is read like a container', () => {
    const trap = traps().find((t) => t.rule === 'hc-stats-matcher-missing')!;
    const [head, sidecar] = trap.text.split('        - name: gracegate-hc\n');
    const native = `${head!.replace('      containers:\n', '      initContainers:\n        - name: gracegate-hc\n          restartPolicy: Always\n' + sidecar!.trimEnd() + '\n      containers:\n')}`;
    const report = lintText(native, 'x.yaml');
    assert.deepEqual(
      report.findings.map((f) => f.rule),
      ['hc-stats-matcher-missing'],
    );
    // Without restartPolicy Always it is an ordinary init container, done before the pod starts: the
    // hold then waits on a sidecar that is not there.
    assert.deepEqual(
      lintText(native.replace('          restartPolicy: Always\n', ''), 'x.yaml').findings.map((f) => f.rule),
      ['proxy-hold-wrong-port'],
    );
  });

  it('a suppression is reported with its reason, and a gracegate.dev/ignore on the pod template counts too', () => {
    const trap = traps().find((t) => t.rule === 'proxy-not-held')!;
    const text = trap.text.replace(
      'metadata: {labels: {app: gw}}',
      "metadata:\n      labels: {app: gw}\n      annotations: {gracegate.dev/ignore: 'proxy-not-held', gracegate.dev/ignore-reason: 'drained by the platform team'}",
    );
    const report = lintText(text, 'x.yaml');
    assert.deepEqual(report.findings, []);
    assert.equal(report.suppressed.length, 1);
    assert.equal(report.suppressed[0]!.rule, 'proxy-not-held');
    assert.equal(report.suppressed[0]!.suppression.reason, 'drained by the platform team');
  });
});
