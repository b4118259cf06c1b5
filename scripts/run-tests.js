#!/usr/bin/env node
'use strict';
// Runs every compiled test file (unit, integration, end-to-end, and the real cluster's) with node's
// own test runner. Node 20's `--test` takes no globs, so the files are listed here. An optional
// argument narrows the run to files whose path contains it (e.g. `npm test -- plan`).
//
// Two phases. First every file outside dist/test/cluster/ (two at a time). Then the cluster's:
// the real Kubernetes of test/cluster (npm run cluster) is started bare, its test files run one at a
// time (they share it), and the last one takes it down and checks that nothing is left. The cluster
// phase runs when a cluster file is selected; with a filter that selects none, no cluster starts.
const { spawnSync } = require('node:child_process');
const { readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const distTest = join(root, 'dist', 'test');
const clusterDir = join(distTest, 'cluster');
/** Runs after every other cluster file, whatever the filter: it takes the cluster down. */
const TEARDOWN = join(clusterDir, 'teardown.test.js');

function findTests(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...findTests(full));
    else if (name.endsWith('.test.js')) out.push(full);
  }
  return out;
}

const filter = process.argv[2];
const all = findTests(distTest).sort();
const selected = all.filter((f) => !filter || f.includes(filter));
if (selected.length === 0) {
  console.error('no test files found (did the build run?)');
  process.exit(1);
}
const env = { ...process.env, GRACEGATE_REPO_ROOT: root };
const isCluster = (f) => f.startsWith(clusterDir + '/');

function nodeTest(files, concurrency) {
  const result = spawnSync(process.execPath, ['--test', '--test-reporter=spec', `--test-concurrency=${concurrency}`, ...files], { stdio: 'inherit', env });
  return result.status ?? 1;
}

const started = Date.now();
let status = 0;
const plain = selected.filter((f) => !isCluster(f));
if (plain.length > 0) status = nodeTest(plain, 2);

const cluster = selected.filter((f) => isCluster(f) && f !== TEARDOWN);
if (cluster.length > 0) {
  console.error(`run-tests: cluster phase (${cluster.length} files) after ${Math.round((Date.now() - started) / 1000)} s`);
  const up = spawnSync(process.execPath, [join(clusterDir, 'main.js'), 'up', '--bare'], { stdio: ['ignore', 'inherit', 'inherit'], env });
  // The cluster files run even when `up` failed: each fails at once saying the cluster is not up,
  // and the teardown still removes whatever `up` left behind.
  if (up.status !== 0) {
    console.error('run-tests: the cluster did not come up');
    status = 1;
  }
  const clusterStatus = nodeTest([...cluster, TEARDOWN], 1);
  if (clusterStatus !== 0) status = clusterStatus;
}
console.error(`run-tests: ${status === 0 ? 'passed' : 'FAILED'} in ${Math.round((Date.now() - started) / 1000)} s`);
process.exit(status);
