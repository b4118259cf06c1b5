#!/usr/bin/env node
'use strict';
// Runs every compiled test file (unit, integration and end-to-end) with node's own test runner.
// Node 20's `--test` takes no globs, so the files are listed here. An optional argument narrows
// the run to files whose path contains it (e.g. `npm test -- plan`).
const { spawnSync } = require('node:child_process');
const { readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

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
const files = findTests(join(__dirname, '..', 'dist', 'test'))
  .filter((f) => !filter || f.includes(filter))
  .sort();
if (files.length === 0) {
  console.error('no test files found (did the build run?)');
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--test', '--test-reporter=spec', '--test-concurrency=2', ...files], {
  stdio: 'inherit',
  env: { ...process.env, GRACEGATE_REPO_ROOT: join(__dirname, '..') },
});
process.exit(result.status ?? 1);
