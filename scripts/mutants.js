#!/usr/bin/env node
'use strict';
// npm run mutants: breaks one behaviour at a time in a copy of the build and checks that the tests
// notice. Each mutant below edits the compiled JavaScript (dist/) of a fresh copy of the worktree
// (node_modules and .cache are linked, not copied), runs the test files it names in that copy, and
// must make at least one of them fail. The same files run unmutated first: a failure there is a
// broken baseline, not a caught mutant. Exit 0 only when every mutant was caught.
//
// After the edits the copy's bundles (dist/gracegate.cjs, dist/hc.cjs: what bin/gracegate.js runs)
// are made again from the mutated dist/src, so the sidecar and every command run the mutant.
// A mutant with `cluster: true` runs cluster test files: the real cluster (test/proof/cluster) is started
// bare first if it is not up, and the cluster test rebuilds the sidecar image from the copy's code
// and imports it into the nodes, so the pods run the mutant too. `env` adds to the tests' environment.
//
// Adding a mutant: append to MUTANTS an id, what it breaks (one sentence, in the words of a bug
// report), its edits, and the test files (paths under test/, without .ts) that should catch it.
// Each edit's `find` is a regular expression that must match exactly once in exactly one compiled
// file under `under` (default dist/src): a refactor that moves or rewrites the code makes the
// script stop with "not found", never pass silently (`node scripts/mutants.js --check` checks every
// mutant against the current build; test/mutants.test.ts runs it). Then run `npm run mutants -- <id>`.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');

const E2E = ['test/proof/e2e/s1-long-request', 'test/proof/e2e/s4-streaming'];
const LINT_CORPUS = ['test/lint/corpus'];

/** On the real cluster: one session of the proof (health-first), about a minute. */
// GRACEGATE_PACK_FROM_DIST: the sidecar image is packed from the copy's mutated dist/, not compiled
// again from src/ (scripts/image/pack.sh), so the cluster's pods run the mutant.
const CLUSTER = { tests: ['test/proof/cluster/sequences'], env: { GRACEGATE_CLUSTER_SESSIONS: 'health-first', GRACEGATE_PACK_FROM_DIST: '1' }, cluster: true };
const DRAIN_NEVER_STARTS = [
  { find: /if \(this\.waiters\.size > 0\)/, replace: 'if (false)' },
  { find: /if \(this\.pendingDrains\.length > 0\) \{/, replace: 'if (false) {' },
];
const HOLD_RELEASED_EARLY = [{ find: /p\.flow = this\.cfg\.sequence;\s*p\.sequenceStartedAt = now;/, replace: '$& this.host.releaseHolds();' }];

/**
 * Inside the real Argo CD (test/proof/cluster/argocd): the CMP image is packed from the copy's
 * mutated dist/ like the sidecar image, so argocd-cmp-server runs the mutant `gracegate argocd generate`.
 */
const ARGOCD = { tests: ['test/proof/cluster/argocd'], env: { GRACEGATE_PACK_FROM_DIST: '1' }, cluster: true };
const MUTANTS = [
  {
    id: 'drain-never-starts',
    what: 'the termination witness is never recognised: /drain waits for a /wait-closed that never counts, the sidecar stays OPEN',
    edits: DRAIN_NEVER_STARTS,
    tests: E2E,
  },
  {
    id: 'load-drain-never-starts',
    what: 'under load (test/proof/load): the termination witness is never recognised, the sidecar stays OPEN while the kubelet deletes the pod',
    edits: DRAIN_NEVER_STARTS,
    tests: ['test/proof/load/load'],
  },
  {
    id: 'cluster-drain-never-starts',
    what: 'on the real cluster: the termination witness is never recognised, the sidecar stays OPEN while the kubelet deletes the pod',
    edits: DRAIN_NEVER_STARTS,
    ...CLUSTER,
  },
  {
    id: 'cluster-hold-released-early',
    what: "on the real cluster: istio-proxy's preStop hold (/wait-closed) is answered when the sequence starts, so the kubelet sends Envoy SIGTERM at the sequence start",
    edits: HOLD_RELEASED_EARLY,
    ...CLUSTER,
  },
  {
    id: 'cluster-hc-probes-rewritten',
    what: 'on the real cluster: the gateway pod loses sidecar.istio.io/rewriteAppHTTPProbers "false", so istiod moves the hc\'s probes onto pilot-agent\'s port',
    edits: [{ find: /\[[\w$.]*ANNOTATIONS\.rewriteAppHttpProbers\]: 'false',/, replace: '' }],
    ...CLUSTER,
  },
  {
    id: 'argocd-generate-unrendered',
    what: "inside Argo CD: the plugin prints a gateway chart's manifests as helm rendered them, without post-rendering: no hc container, no proxy hold, the chart's grace period",
    edits: [
      {
        find: /tools\.write\(tools\.postRender\(text, loaded, /,
        replace: "tools.write(loaded.kind === 'GracefulGateway' ? text : tools.postRender(text, loaded, ",
      },
    ],
    ...ARGOCD,
  },
  {
    id: 'argocd-invalid-exit-0',
    what: 'inside Argo CD: on an invalid spec the plugin prints nothing and exits 0, so Argo CD sees an app with no objects instead of the error',
    edits: [{ find: /return generate\(\);/, replace: 'return generate().catch(() => 0);' }],
    ...ARGOCD,
  },
  {
    id: 'hold-released-early',
    what: 'GET /wait-closed (the proxy hold) is answered when the sequence starts instead of at CLOSED',
    edits: HOLD_RELEASED_EARLY,
    tests: [...E2E, 'test/hc/wait-closed-hold'],
  },
  {
    id: 'grace-shortened',
    what: 'the planned terminationGracePeriodSeconds covers only the drain timeout (no LB buffer, no proxy exit, no margin)',
    edits: [{ find: /derived\)\(Math\.ceil\(Math\.max\(ours, floor\)\)/, replace: 'derived)(drainTimeout.value' }],
    tests: E2E,
  },
  {
    id: 'lb-buffer-skipped',
    what: "the sidecar does not wait the LB buffer: each sequence's next step follows at once",
    edits: [{ find: /p\.bufferStartedAt \+ this\.cfg\.lbBufferSeconds \* 1000 - now/, replace: 'p.bufferStartedAt - now' }],
    tests: E2E,
  },
  {
    id: 'in-flight-always-0',
    what: "the sidecar reads Envoy's in-flight count as 0, whatever Envoy says",
    edits: [{ find: /return first\.total === 0 \? \(await readCount\(\)\)\.total : first\.total;/, replace: 'return 0;' }],
    tests: E2E,
  },
  {
    id: 'race-window-750ms',
    what: 'the connect-cut window around DOWN loosened from 50 ms to 750 ms (it would excuse requests the pod was serving)',
    edits: [{ find: /exports\.DOWN_RACE_WINDOW_MS = 50;/, replace: 'exports.DOWN_RACE_WINDOW_MS = 750;', under: 'dist/test' }],
    tests: ['test/proof/e2e/classify-failures'],
  },
  {
    id: 'no-answer-1000ms',
    what: "the keep-alive race's no-answer time loosened from 20 ms to 1000 ms",
    edits: [{ find: /exports\.NO_ANSWER_MS = 20;/, replace: 'exports.NO_ANSWER_MS = 1000;', under: 'dist/test' }],
    tests: ['test/proof/e2e/classify-failures'],
  },
  // lint's inference of the LB's view (issue 28): each source removed alone must fail the corpus.
  {
    id: 'lb-view-no-cloud-annotations',
    what: "lint ignores the NLB's Service annotations and the ALB's Ingress annotations when it infers what the LB probes",
    edits: [
      {
        find: /const clouds = \[\.\.\.ctx\.servicesOf\(pod\)\.flatMap\(\(svc\) => \(0, lb_probe_nlb_1\.nlbProbes\)\(ctx, pod, svc\)\), \.\.\.\(0, lb_probe_alb_1\.albProbes\)\(ctx, pod\)\];/,
        replace: 'const clouds = [];',
      },
    ],
    tests: LINT_CORPUS,
  },
  {
    id: 'lb-view-no-health-container',
    what: "lint does not see a hand-made health container (the W6 design's) behind the NodePort the LB probes",
    edits: [{ find: /return \{ role: 'health-container', container \};/, replace: "return { role: 'traffic' };" }],
    tests: LINT_CORPUS,
  },
  {
    id: 'lb-view-no-status-port',
    what: "lint does not take Istio's status port 15021 as the LB's probe where the pod exposes nothing else",
    edits: [{ find: /probes = health\.length > 0 \? health : status;/, replace: 'probes = health;' }],
    tests: LINT_CORPUS,
  },
  {
    id: 'lb-view-no-host-port',
    what: 'lint does not see a hostPort as the way the LB reaches the pod',
    edits: [
      {
        find: /if \(\(0, json_1\.isObject\)\(p\) && typeof p\.hostPort === 'number' && p\.hostPort > 0 && typeof p\.containerPort === 'number'\)/,
        replace: 'if (false)',
      },
    ],
    tests: LINT_CORPUS,
  },
  {
    id: 'lb-view-no-flag',
    what: 'lint ignores --lb MODEL,path=…,port=N',
    edits: [{ find: /if \(flag && ctx\.gateways\.includes\(pod\)\)/, replace: 'if (false)' }],
    tests: LINT_CORPUS,
  },
  {
    id: 'lb-view-no-sidecar-at-pod-ip',
    what: "lint does not take gracegate's sidecar as the LB's probe where no Service exposes it (an LB on the pod network)",
    edits: [{ find: /if \(sidecar && !probes\.some\(\(p\) => p\.container === sidecar\.container\)\) \{/, replace: 'if (false) {' }],
    tests: LINT_CORPUS,
  },
  {
    id: 'lb-view-no-nlb-timing',
    what: "lint does not read the NLB's detection time from its Service's annotations",
    edits: [{ find: /: \(0, lb_probe_nlb_1\.nlbTiming\)\(ctx, pod\) \};/, replace: ': undefined };' }],
    tests: LINT_CORPUS,
  },
  {
    id: 'lint-no-injected-readiness',
    what: "lint forgets the readiness probe Istio's injector gives istio-proxy (GET /healthz/ready :15021)",
    edits: [{ find: /if \(c\.name === ctx\.proxyContainer && ctx\.injection\(pod\)\.injected\)/, replace: 'if (false)' }],
    tests: LINT_CORPUS,
  },
  {
    id: 'lint-injection-label-ignored',
    what: 'lint does not see the sidecar.istio.io/inject: "true" label as Istio injecting the pod',
    edits: [{ find: /if \(label === 'true'\)\n(\s*)return \{ injected: true,/, replace: "if (label === 'true')\n$1return { injected: false," }],
    tests: LINT_CORPUS,
  },
];

function jsFiles(dir) {
  const out = [];
  for (const name of fs.readdirSync(dir)) {
    const full = path.join(dir, name);
    if (fs.statSync(full).isDirectory()) out.push(...jsFiles(full));
    else if (name.endsWith('.js')) out.push(full);
  }
  return out;
}

/** A copy of the worktree to mutate: everything but node_modules, .cache and .git, which are linked. */
function copyWorktree() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gg-mutant-'));
  const linked = new Set(['node_modules', '.cache', '.git']);
  for (const name of fs.readdirSync(ROOT)) {
    if (linked.has(name)) fs.symlinkSync(path.join(ROOT, name), path.join(dir, name));
    else fs.cpSync(path.join(ROOT, name), path.join(dir, name), { recursive: true });
  }
  return dir;
}

/** The one compiled file under `root` where `edit.find` matches, exactly once; throws otherwise. */
function locateEdit(root, edit) {
  const under = path.join(root, edit.under ?? 'dist/src');
  const global = new RegExp(edit.find.source, 'g');
  const hits = jsFiles(under)
    .map((f) => ({ f, n: (fs.readFileSync(f, 'utf8').match(global) ?? []).length }))
    .filter((h) => h.n > 0);
  if (hits.length !== 1 || hits[0].n !== 1) {
    throw new Error(
      `edit ${edit.find} must match once in one file under ${edit.under ?? 'dist/src'}; found ${hits.map((h) => `${h.n} in ${path.relative(root, h.f)}`).join(', ') || 'nothing'}: update the mutant to the code as it is now`,
    );
  }
  return hits[0].f;
}

function applyEdit(copy, edit) {
  const file = locateEdit(copy, edit);
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(edit.find, edit.replace));
  return path.relative(copy, file);
}

/** The compiled test files of `tests` under `root`; throws when one is missing. */
function testFiles(root, tests) {
  const files = jsFiles(path.join(root, 'dist', 'test'))
    .filter((f) => tests.some((t) => f.includes(`dist/${t}.test.js`)))
    .sort();
  if (files.length !== tests.length) throw new Error(`test files not found: ${tests.join(', ')}`);
  return files;
}

/**
 * --check: every mutant's edits still match once in the current build and its test files exist,
 * without running anything (test/mutants.test.ts runs it, so a refactor cannot leave a mutant behind).
 */
function check() {
  const problems = [];
  for (const m of MUTANTS) {
    for (const e of m.edits) {
      try {
        locateEdit(ROOT, e);
      } catch (err) {
        problems.push(`${m.id}: ${err.message}`);
      }
    }
    try {
      testFiles(ROOT, m.tests);
    } catch (err) {
      problems.push(`${m.id}: ${err.message}`);
    }
  }
  for (const p of problems) console.error(p);
  console.log(`${MUTANTS.length - new Set(problems.map((p) => p.split(':')[0])).size}/${MUTANTS.length} mutants apply to the current build`);
  process.exit(problems.length === 0 ? 0 : 1);
}

/** Makes the copy's bundles again from its (mutated) dist/src: bin/gracegate.js runs them. */
function rebundle(copy) {
  const r = spawnSync(process.execPath, [path.join(copy, 'scripts', 'bundle.js'), '--no-cache'], { cwd: copy, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`bundling the mutated build failed: ${r.stderr}`);
}

/** The real cluster, bare, for the cluster mutants (left up: npm test's teardown or npm run cluster -- down takes it down). */
function ensureCluster() {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'dist', 'test', 'proof', 'cluster', 'main.js'), 'up', '--bare'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (r.status !== 0) throw new Error('the cluster did not come up for the cluster mutants');
}

/** Runs the compiled test files whose path contains one of `tests` in `copy`; the names of the failing tests. */
function runTests(copy, tests, extraEnv = {}) {
  const files = testFiles(copy, tests);
  const started = Date.now();
  const r = spawnSync(process.execPath, ['--test', '--test-reporter=spec', '--test-concurrency=2', ...files], {
    cwd: copy,
    encoding: 'utf8',
    env: { ...process.env, GRACEGATE_REPO_ROOT: copy, ...extraEnv },
    maxBuffer: 64 * 1024 * 1024,
    timeout: 30 * 60 * 1000,
  });
  const failed = [
    ...new Set(
      (r.stdout ?? '')
        .split('\n')
        .filter((l) => /^\s*✖ /.test(l) && !/^\s*✖ failing tests/.test(l))
        .map((l) => l.replace(/^\s*✖ /, '').replace(/ \(\d+(\.\d+)?m?s\)$/, '')),
    ),
  ];
  return { status: r.status, failed, seconds: Math.round((Date.now() - started) / 1000), output: r.stdout + r.stderr };
}

function main() {
  if (process.argv[2] === '--check') return check();
  const only = process.argv.slice(2);
  const chosen = only.length > 0 ? MUTANTS.filter((m) => only.includes(m.id)) : MUTANTS;
  if (chosen.length === 0) {
    console.error(`no mutant named ${only.join(', ')}; known: ${MUTANTS.map((m) => m.id).join(', ')}`);
    process.exit(2);
  }
  const started = Date.now();
  if (chosen.some((m) => m.cluster)) ensureCluster();
  const baselineTests = [...new Set(chosen.flatMap((m) => m.tests))];
  const baselineEnv = Object.assign({}, ...chosen.map((m) => m.env ?? {}));
  const base = copyWorktree();
  try {
    const b = runTests(base, baselineTests, baselineEnv);
    console.log(`baseline (no mutation): ${baselineTests.join(', ')}: ${b.status === 0 ? 'pass' : 'FAIL'} in ${b.seconds} s`);
    if (b.status !== 0) {
      console.log(b.output.slice(-4000));
      console.error('mutants: the unmutated tests fail; fix that first');
      process.exit(1);
    }
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
  const survived = [];
  for (const m of chosen) {
    const copy = copyWorktree();
    try {
      const files = m.edits.map((e) => applyEdit(copy, e));
      rebundle(copy);
      const r = runTests(copy, m.tests, m.env);
      const caught = r.status !== 0 && r.failed.length > 0;
      console.log(`${caught ? 'caught  ' : 'SURVIVED'} ${m.id} (${[...new Set(files)].join(', ')}; ${r.seconds} s): ${m.what}`);
      for (const name of r.failed) console.log(`           failed: ${name}`);
      if (!caught) survived.push(m.id);
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  }
  console.log(
    `${chosen.length - survived.length}/${chosen.length} mutants caught in ${Math.round((Date.now() - started) / 1000)} s${survived.length ? `; survived: ${survived.join(', ')}` : ''}`,
  );
  process.exit(survived.length === 0 ? 0 : 1);
}

main();
