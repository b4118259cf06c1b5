import assert from 'node:assert/strict';
import { test } from 'node:test';
import { liveDifferences } from '../../src/lint/rules/live-compare';

/* What lint compares on an object read back from the API server: only what the plan sets (issue 36). */

const plannedHc = {
  name: 'gracegate-hc',
  ports: [{ name: 'hc-health', containerPort: 18180, protocol: 'TCP' }],
  readinessProbe: { httpGet: { path: '/health', port: 'hc-health' }, periodSeconds: 2 },
};

test("the server's defaults beside the planned fields, and an injected container beside the sidecar, are no drift", () => {
  const live = [
    { name: 'istio-init', image: 'auto' },
    {
      ...plannedHc,
      terminationMessagePath: '/dev/termination-log',
      imagePullPolicy: 'IfNotPresent',
      resources: {},
      ports: [{ name: 'hc-health', containerPort: 18180, protocol: 'TCP' }],
      readinessProbe: {
        httpGet: { path: '/health', port: 'hc-health', scheme: 'HTTP' },
        periodSeconds: 2,
        timeoutSeconds: 1,
        successThreshold: 1,
        failureThreshold: 3,
      },
    },
  ];
  assert.deepEqual(liveDifferences([plannedHc], live, ['spec', 'containers']), []);
});

test('a planned field changed or missing is named by its path (list entries by their index in the live object), with both values', () => {
  const rewritten = [
    { name: 'istio-proxy' },
    { ...plannedHc, readinessProbe: { httpGet: { path: '/app-health/gracegate-hc/readyz', port: 15020 }, periodSeconds: 2 } },
  ];
  assert.deepEqual(liveDifferences([plannedHc], rewritten, ['spec', 'containers']), [
    { path: ['spec', 'containers', 1, 'readinessProbe', 'httpGet', 'path'], planned: '/health', live: '/app-health/gracegate-hc/readyz' },
    { path: ['spec', 'containers', 1, 'readinessProbe', 'httpGet', 'port'], planned: 'hc-health', live: 15020 },
  ]);
  assert.deepEqual(liveDifferences({ minReadySeconds: 10, replicas: 2 }, { replicas: 2 }, ['spec']), [
    { path: ['spec', 'minReadySeconds'], planned: 10, live: undefined },
  ]);
  assert.deepEqual(liveDifferences([plannedHc], [{ name: 'istio-proxy' }], ['spec', 'containers']), [
    { path: ['spec', 'containers', 1], planned: plannedHc, live: undefined },
  ]);
});

test('lists of unnamed entries keep their length and order; an int-or-string keeps its type', () => {
  const terms = [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'igw' } } }];
  assert.deepEqual(liveDifferences(terms, [{ ...terms[0] }], ['affinity']), []);
  assert.equal(liveDifferences(terms, [...terms, ...terms], ['affinity']).length, 1);
  assert.deepEqual(liveDifferences(['gracegate', 'hc'], ['gracegate', 'hc', '--debug'], ['command']), [
    { path: ['command'], planned: ['gracegate', 'hc'], live: ['gracegate', 'hc', '--debug'] },
  ]);
  assert.equal(liveDifferences({ maxSurge: 1 }, { maxSurge: '1' }, ['rollingUpdate']).length, 1);
  assert.equal(liveDifferences({ maxSurge: 1 }, { maxSurge: '25%' }, ['rollingUpdate']).length, 1);
});
