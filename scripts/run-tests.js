#!/usr/bin/env node
'use strict';
// Runs every compiled test file (unit, integration, end-to-end, and the real cluster's) with node's
// own test runner. Node 20's `--test` takes no globs, so the files are listed here. An optional
// argument narrows the run to files whose path contains it (e.g. `npm test -- plan`).
//
// Two tracks, one after the other (GRACEGATE_TEST_TRACKS=parallel runs them side by side); the
// cluster track's builds, images and bare start go beside the plain track (clusterPrelude):
//   - every file outside dist/test/proof/cluster/, three at a time (GRACEGATE_PLAIN_CONCURRENCY),
//     the longest first (longestFirst), its output as it comes;
//   - the cluster's: the real Kubernetes of test/proof/cluster is built if missing (scripts/cluster/
//     build.sh, scripts/kube-router/build.sh and images.sh, niced: on a cold machine the Go builds
//     use what the other track leaves; on a warm one they do nothing), started bare, its test files
//     one at a time in one lane, the Argo CD ones last (GRACEGATE_CLUSTER_LANES=2 for two lanes side
//     by side, laneOf below), and teardown.test.js takes it down last and checks that
//     nothing is left. Its output is kept in .cache/cluster/test-output.log and printed when it ends.
//     No cluster file runs beside a build: Argo CD's (scripts/argocd/build.sh and images.sh, niced
//     likewise; on a cold machine the last build to finish) is waited for before the cluster starts,
//     and when no Argo CD file is selected, a build of it under way is waited for all the same. A
//     cold CI run once lost a cluster file's HAProxy checks (300 ms, a pod that was not leaving timed
//     out at 1.5 s) to the Argo CD build compiling beside it (issue 50, item 6).
// The cluster track runs when a cluster file is selected; with a filter that selects none, no
// cluster starts.
// Why this shape (docs/flakes.md has the measurements): the plain track alone leaves the cores
// about half idle at two files at a time (its end-to-end files mostly wait on their own clocks),
// so it takes three. The tracks side by side failed every run of the soak of 5 December: on 2
// cores the load reached 30-44, and LB checks and drains timed out. A third cluster lane (Argo CD
// beside a and b) is refused by the nodes themselves: every gateway pod requests 200m of CPU, the
// three nodes offer 2 cores each, and the delivery paths' 16 pods with Argo CD's 11 left pods
// Pending until the rollouts timed out. Two lanes fit the nodes (Argo CD starts once the delivery
// paths' namespaces are deleted) but not the cores: on 6 December the CI run of 66b6525 and a run
// here beside the delivery paths' start (load average 27) each failed the drain-first session, a
// stream on the leaving pod stalled for 3.4 s and the drain ended on its timeout, where the same
// session alone passes; two lanes had passed 1 of the last 5 full runs. One lane costs about seven
// minutes and measures every termination with nothing else under way. The bare cluster idles beside the
// plain track (kube-apiserver, etcd, three kubelets, istiod, no pod of a test): on a warm machine its
// start (about a minute) and the images' packing no longer wait for the plain track's end.
const { spawn } = require('node:child_process');
const { copyFileSync, createWriteStream, mkdirSync, readdirSync, readFileSync, statSync } = require('node:fs');
const { homedir } = require('node:os');
const { join, relative } = require('node:path');

const root = join(__dirname, '..');
const distTest = join(root, 'dist', 'test');
const clusterDir = join(distTest, 'proof', 'cluster');
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
const isCluster = (f) => f.startsWith(`${clusterDir}/`);
/** The cluster files that need Argo CD (test/proof/cluster/argocd*.test.ts). */
const isArgoCd = (f) => f.startsWith(`${clusterDir}/argocd`);
const started = Date.now();
const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`;

/**
 * Bounds: a test without its own timeout gets TEST_TIMEOUT_MS; a file whose tests are over exits
 * even when a handle is left open (--test-force-exit: a timed-out test's children and servers
 * kept a file's process alive for good once, and the run with it; the harness kills its children
 * at exit); and the whole run ends at RUN_BOUND_MS, failing, whatever still runs.
 */
const TEST_TIMEOUT_MS = 15 * 60_000;
const RUN_BOUND_MS = 80 * 60_000;
const children = new Set();

/** Runs argv; its output goes to `out` (a stream) or is inherited; resolves with the exit status. */
function run(argv, out) {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', out ? 'pipe' : 'inherit', out ? 'pipe' : 'inherit'] });
    children.add(child);
    child.on('exit', () => children.delete(child));
    if (out) {
      child.stdout.pipe(out, { end: false });
      child.stderr.pipe(out, { end: false });
    }
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** Runs argv, its stderr into `out`; resolves with its exit status and its stdout. */
function capture(argv, out) {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    child.stdout.on('data', (c) => (stdout = (stdout + c).slice(-64 * 1024)));
    child.stderr.pipe(out, { end: false });
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve({ status: code ?? (signal ? 1 : 0), stdout });
    });
  });
}

/** Where each track's test times go (scripts/test-times-reporter.js: one line per top-level test). */
const timesFile = (track) => join(root, '.cache', `test-times-${track}.jsonl`);

const nodeTest = (files, concurrency, out, track) =>
  run(
    [
      process.execPath,
      '--test',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      `--test-reporter=${join(root, 'scripts', 'test-times-reporter.js')}`,
      `--test-reporter-destination=${timesFile(track)}`,
      '--test-force-exit',
      `--test-timeout=${TEST_TIMEOUT_MS}`,
      `--test-concurrency=${concurrency}`,
      ...files,
    ],
    out,
  );

/** The machine's cache folder (scripts/cache-dir.sh's rule), where the plain files' last times are kept. */
const machineCache = process.env.GRACEGATE_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'gracegate');
const lastPlainTimes = join(machineCache, 'test-times-plain.jsonl');

/**
 * The plain files, longest first, so that the last to start are short and no long file runs alone
 * at the end (node's runner starts the files in the order given). The lengths are the last run's on
 * this machine (kept outside the clone); a file never timed counts 30 s under proof/ (the end-to-end
 * files, which wait on their own clocks), 2 s elsewhere.
 */
function longestFirst(files) {
  const ms = new Map();
  try {
    for (const line of readFileSync(lastPlainTimes, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const { file, durationMs } = JSON.parse(line);
      const key = file.slice(file.lastIndexOf('/dist/test/') + '/dist/test/'.length);
      ms.set(key, (ms.get(key) ?? 0) + durationMs);
    }
  } catch {
    // No earlier run on this machine: the defaults below.
  }
  const weight = (f) => ms.get(relative(distTest, f)) ?? (relative(distTest, f).startsWith('proof/') ? 30_000 : 2_000);
  return [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b));
}

async function plainTrack() {
  const plain = longestFirst(selected.filter((f) => !isCluster(f)));
  if (plain.length === 0) return 0;
  const status = await nodeTest(plain, PLAIN_CONCURRENCY, undefined, 'plain');
  if (!filter) {
    try {
      mkdirSync(machineCache, { recursive: true });
      copyFileSync(timesFile('plain'), lastPlainTimes);
    } catch {
      // The next run orders by the defaults.
    }
  }
  console.error(`run-tests: ${plain.length} files outside the cluster done (${status === 0 ? 'passed' : 'FAILED'}) after ${elapsed()}`);
  return status;
}

/**
 * With GRACEGATE_CLUSTER_LANES=2, the cluster's files in two lanes side by side, each a file at a time: they share the cluster but
 * not its namespaces, NodePorts or LB ports (each file's are its own: test/proof/cluster/layout.ts),
 * and most of a file's time is waiting on the cluster's own clocks (grace periods, LB detection,
 * drains), not the cores. Balanced by the files' warm times (docs/flakes.md has the measurement):
 * the sequences beside the delivery paths, the short files after the sequences, Argo CD's after the
 * delivery paths (on a cold machine its build is the last to finish).
 */
const LANE_A = ['sequences', 'kubelet-model', 'lifecycle', 'netpol'];
/**
 * One lane by default (the header says why): every file one after the other, Argo CD's last.
 * GRACEGATE_CLUSTER_LANES=2 runs a and b side by side, Argo CD's after b; 3 gives Argo CD's files a
 * lane of their own beside a and b (which the nodes' CPU requests do not fit: the header).
 */
const CLUSTER_LANES = ['2', '3'].includes(process.env.GRACEGATE_CLUSTER_LANES ?? '') ? Number(process.env.GRACEGATE_CLUSTER_LANES) : 1;
/** Files outside the cluster run at once (the header says why three). */
const PLAIN_CONCURRENCY = Number(process.env.GRACEGATE_PLAIN_CONCURRENCY ?? '') || 3;
const MODE_PREFIX = 'run-tests: mode: ';
const laneOf = (f) => (LANE_A.some((name) => f.endsWith(`/${name}.test.js`)) ? 'a' : 'b');

/**
 * Argo CD's binary (scripts/argocd/build.sh: on a cold machine it waits for the build the test
 * preparation started in the background, niced below the cluster's) and its images; the status,
 * and the two folders the scripts print (images-main.js takes them rather than run them again).
 */
async function argoCdBuild(out, log) {
  const lastLine = (stdout) => stdout.trim().split('\n').pop();
  const built = await capture(['nice', '-n', '10', 'bash', join(root, 'scripts/argocd/build.sh')], out);
  let status = built.status;
  let images;
  if (status === 0) {
    const made = await capture(['nice', '-n', '10', 'bash', join(root, 'scripts/argocd/images.sh'), lastLine(built.stdout)], out);
    status = made.status;
    images = lastLine(made.stdout);
  }
  log(`Argo CD binary and images ${status === 0 ? 'ready' : 'FAILED'} after ${elapsed()}`);
  return { status, dirs: status === 0 ? [lastLine(built.stdout), images] : [] };
}

/**
 * The cluster track's first half: the builds (nothing to do on a warm machine), the images, Argo
 * CD's build and images, and `up --bare`. It starts with the plain track (the header says why);
 * resolves with the statuses the lanes need.
 */
async function clusterPrelude(out) {
  const cluster = selected.filter((f) => isCluster(f) && f !== TEARDOWN);
  if (cluster.length === 0) return null;
  const log = (line) => out.write(`run-tests: ${line}\n`);
  log(`cluster track: ${cluster.length} files`);
  // Builds nothing on a warm machine; on a cold one it waits for the build the test preparation
  // started in the background, niced, so the other track's timings are its own. Not spawnSync: the
  // other track's output streams through this process meanwhile.
  const bin = await capture(['nice', '-n', '10', 'bash', join(root, 'scripts/cluster/build.sh')], out);
  let status = bin.status;
  // kube-router's NetworkPolicy controller, the cluster's enforcing NetworkPolicy implementation:
  // its own build and cache key (scripts/kube-router/build.sh), started by the test preparation.
  if (status === 0) status = (await capture(['nice', '-n', '10', 'bash', join(root, 'scripts/kube-router/build.sh')], out)).status;
  if (status === 0) {
    const versions = JSON.parse(readFileSync(join(root, 'test/support/envoy-versions.json'), 'utf8')).versions.map((v) => v.version);
    status = await run(['nice', '-n', '10', 'bash', join(root, 'scripts/cluster/images.sh'), bin.stdout.trim().split('\n').pop(), ...versions], out);
  }
  log(`cluster binaries and images ${status === 0 ? 'ready' : 'FAILED'} after ${elapsed()}`);
  const argocd = cluster.filter(isArgoCd);
  // Argo CD's build and images before any cluster file runs (the header says why); its files still
  // run if it failed, each failing at once saying what is missing.
  const argo =
    argocd.length > 0
      ? await argoCdBuild(out, log)
      : await capture(['bash', join(root, 'scripts/argocd/build.sh'), '--wait-running'], out).then((r) => ({ status: r.status, dirs: [] }));
  const argoStatus = argo.status;
  if (status === 0) status = await run([process.execPath, join(clusterDir, 'main.js'), 'up', '--bare'], out);
  // The cluster files run even when the build or `up` failed: each fails at once saying the cluster
  // is not up, and the teardown still removes whatever `up` left behind.
  if (status !== 0) log('the cluster did not come up');
  log(`cluster up after ${elapsed()}`);
  // Argo CD's images into the nodes now, not in the first seconds of its file (last in its lane):
  // a failure here is the file's to report, which imports them again.
  if (status === 0 && argocd.length > 0 && argoStatus === 0) {
    const imported = await run(['nice', '-n', '10', process.execPath, join(clusterDir, 'argocd', 'images-main.js'), ...argo.dirs], out);
    log(`Argo CD images in the nodes (${imported === 0 ? 'done' : 'FAILED: its file tries again'}) after ${elapsed()}`);
  }
  return { cluster, argocd, status, argoStatus, log };
}

/** The cluster track's second half: its files in lanes (below), then the teardown. */
async function clusterTrack(out, prelude) {
  if (!prelude) return 0;
  const { cluster, argocd, argoStatus, log } = prelude;
  const status = prelude.status;
  const laneA = cluster.filter((f) => !isArgoCd(f) && laneOf(f) === 'a');
  const laneB = cluster.filter((f) => !isArgoCd(f) && laneOf(f) === 'b');
  const lane = async (name, files, then) => {
    let s = files.length > 0 ? await nodeTest(files, 1, out, `cluster-${name}`) : 0;
    if (then) {
      const more = await then();
      s = s !== 0 ? s : more;
    }
    log(`cluster lane ${name} done (${s === 0 ? 'passed' : 'FAILED'}) after ${elapsed()}`);
    return s;
  };
  // The Argo CD files after lane b's (their build and images are ready: above).
  const argoCdFiles = async () => {
    const more = await nodeTest(argocd, 1, out, 'cluster-argocd');
    return more !== 0 ? more : argoStatus;
  };
  const argoCdThen = argocd.length > 0 ? argoCdFiles : undefined;
  const lanes =
    CLUSTER_LANES === 3
      ? await Promise.all([lane('a', laneA), lane('b', laneB), lane('argocd', [], argoCdThen)])
      : CLUSTER_LANES === 2
        ? await Promise.all([lane('a', laneA), lane('b', laneB, argoCdThen)])
        : [await lane('a+b', [...laneA, ...laneB], argoCdThen)];
  const down = await nodeTest([TEARDOWN], 1, out, 'cluster-teardown');
  const tests = lanes.find((s) => s !== 0) ?? down;
  log(`cluster track done (${tests === 0 && status === 0 ? 'passed' : 'FAILED'}) after ${elapsed()}`);
  return status !== 0 ? status : tests;
}

async function main() {
  setTimeout(() => {
    console.error(`run-tests: FAILED: still running after ${RUN_BOUND_MS / 60_000} min; stopping ${children.size} test process(es)`);
    for (const child of children) child.kill('SIGTERM');
    setTimeout(() => process.exit(1), 10_000).unref();
  }, RUN_BOUND_MS).unref();
  const logDir = join(root, '.cache', 'cluster');
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, 'test-output.log');
  const out = createWriteStream(logFile);
  const serial = process.env.GRACEGATE_TEST_TRACKS !== 'parallel';
  // The soak (test/soak/soak-main.ts) records each run's mode from this line.
  console.error(
    `${MODE_PREFIX}${serial ? 'tracks one after the other' : 'tracks side by side'}, ${['one cluster lane', 'two cluster lanes', 'three cluster lanes'][CLUSTER_LANES - 1]}, ${PLAIN_CONCURRENCY} plain files at a time`,
  );
  let statuses;
  // The cluster's builds, images and bare start go beside the plain track either way (the header
  // says why); only its files wait for the plain track's end in the serial mode.
  const prelude = clusterPrelude(out);
  if (serial) {
    const plain = await plainTrack();
    statuses = [plain, await clusterTrack(out, await prelude)];
  } else {
    const cluster = prelude.then((p) => clusterTrack(out, p));
    statuses = [await plainTrack(), await cluster];
  }
  await new Promise((r) => out.end(r));
  if (selected.some(isCluster)) {
    console.log(`\n---- the cluster track (${logFile}) ----`);
    process.stdout.write(readFileSync(logFile, 'utf8'));
  }
  const status = statuses.find((s) => s !== 0) ?? 0;
  console.error(`run-tests: ${status === 0 ? 'passed' : 'FAILED'} in ${elapsed()}`);
  process.exit(status);
}

main();
