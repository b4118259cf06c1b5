import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { planWorkload } from '../../src/plan/workload/plan-workload';
import { applyWorkloadChanges } from '../../src/pod/workload/apply';
import type { K8sObject } from '../../src/pod/k8s';
import { workloadChanges, workloadExtraObjects } from '../../src/pod/workload/pod-changes';
import { parseWorkloadSpec } from '../../src/schema/spec-kinds';
import { validateK8s } from '../emit/helpers';
import { REPO_ROOT } from '../support/run-cli';
import { run, tempDir } from './tools';

const tmp = tempDir('gracegate-cdk8s-plus-app-');

test('the cdk8s-plus-28 example app synthesises a graceful Deployment with every planned field', () => {
  const r = run(process.execPath, [join(REPO_ROOT, 'dist/examples/cdk8s-plus-app/main.js')], { env: { CDK8S_OUTDIR: tmp } });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(readdirSync(tmp), ['inference.k8s.yaml']);
  const objects = parseAllDocuments(readFileSync(join(tmp, 'inference.k8s.yaml'), 'utf8')).map((d) => d.toJS());
  assert.deepEqual(
    objects.map((o) => o.kind),
    ['Deployment', 'Service', 'PodDisruptionBudget'],
  );
  for (const o of objects) validateK8s(o);

  const plan = planWorkload(parseWorkloadSpec(readFileSync(join(REPO_ROOT, 'examples/app-workload.yaml'), 'utf8')));
  const [dep, service, pdb] = objects;
  const pod = dep.spec.template.spec;
  const api = pod.containers.find((c: { name: string }) => c.name === plan.workload.container);
  assert.ok(api, 'the app container');
  assert.deepEqual(api.lifecycle, { preStop: { sleep: { seconds: plan.timings.preStopSeconds } } });
  assert.deepEqual(api.env, [{ name: 'SHUTDOWN_TIMEOUT_SEC', value: String(plan.timings.shutdownTimeoutSeconds) }]);
  assert.equal(pod.terminationGracePeriodSeconds, plan.timings.terminationGracePeriodSeconds);
  assert.deepEqual(dep.spec.strategy, {
    type: 'RollingUpdate',
    rollingUpdate: { maxSurge: plan.rollout.maxSurge, maxUnavailable: plan.rollout.maxUnavailable },
  });
  assert.equal(dep.spec.replicas, plan.replicas);
  assert.equal(pod.affinity, undefined, 'the plan asks for no anti-affinity');
  // What the team built stays as built.
  assert.equal(api.readinessProbe.httpGet.path, '/health');
  assert.equal(api.resources.requests.cpu, '500m');
  assert.deepEqual(service.spec.selector, dep.spec.selector.matchLabels);
  assert.deepEqual(pdb.spec, {
    maxUnavailable: plan.rollout.pdbMaxUnavailable,
    selector: { matchLabels: dep.spec.selector.matchLabels },
    unhealthyPodEvictionPolicy: 'AlwaysAllow',
  });
  // Nothing else planned is missing: the changes, applied again to the synthesised Deployment, find
  // nothing to change, and the PDB is the one post-render would write for the pods' own labels.
  const withLabels = { ...plan, workload: { ...plan.workload, selectorLabels: dep.spec.selector.matchLabels } };
  const changes = workloadChanges(withLabels);
  assert.deepEqual(applyWorkloadChanges(dep as K8sObject, changes), dep, 'a planned field is missing or different in the synthesised Deployment');
  assert.deepEqual(pdb, workloadExtraObjects(changes)[0]);
});
