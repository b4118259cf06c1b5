/**
 * The suite run N times back to back, each on a clean clone of HEAD, as CI runs it (`bash .ci/run` with
 * CI=true, and the environment it was given, e.g. GRACEGATE_TEST_TRACKS=parallel), every failure recorded in
 * docs/flakes.json with the machine's load average when the test ended; docs/flakes.md is rendered
 * anew after each run. Each run clones HEAD again: commit nothing while a soak runs.
 *   npm run soak -- N         (N full runs; about 12 minutes each on a warm machine)
 *   npm run soak -- N --cold  (each run with a cache of its own, empty at the start: every build, image
 *                              and download from nothing, as on a fresh machine; removed after the run)
 *   npm run soak -- --render  (docs/flakes.md from docs/flakes.json, nothing run)
 * The clone is made beside this one (../gracegate-soak) and removed at the end; its tests find
 * their fixtures through test/support/fixtures.ts, as any clone's do. A run is bounded by CI's own 90 minutes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { loadavg, tmpdir } from 'node:os';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, createWriteStream as fileStream } from 'node:fs';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from '../support/repo';
import { FLAKES_FILE, FLAKES_MD, readFlakes, renderFlakesMd, type FlakesFile, type SoakRun } from './flakes';
import { failuresIn, sampleAt } from './parse';

const RUN_BOUND_MS = 90 * 60_000;
const SAMPLE_EVERY_MS = 5_000;

function save(f: FlakesFile): void {
  writeFileSync(FLAKES_FILE, `${JSON.stringify(f, null, 1)}\n`);
  writeFileSync(FLAKES_MD, renderFlakesMd(f));
}

/** One `bash .ci/run` in a fresh clone of HEAD; its output lines with their times, and the load samples. */
async function oneRun(
  clone: string,
  logFile: string,
  env: NodeJS.ProcessEnv,
): Promise<{ status: number; lines: Array<{ atMs: number; text: string }>; samples: Array<{ atMs: number; value: number }>; seconds: number }> {
  rmSync(clone, { recursive: true, force: true });
  const cloned = spawnSync('git', ['clone', '--quiet', REPO_ROOT, clone], { stdio: 'inherit' });
  if (cloned.status !== 0) throw new Error(`git clone ${REPO_ROOT} ${clone} failed`);
  const log = fileStream(logFile);
  const lines: Array<{ atMs: number; text: string }> = [];
  const samples: Array<{ atMs: number; value: number }> = [];
  const sample = () => samples.push({ atMs: Date.now(), value: loadavg()[0]! });
  sample();
  const sampler = setInterval(sample, SAMPLE_EVERY_MS);
  const started = Date.now();
  const child = spawn('bash', ['.ci/run'], { cwd: clone, env: { ...process.env, ...env, CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const bound = setTimeout(() => child.kill('SIGTERM'), RUN_BOUND_MS);
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream.setEncoding('utf8').on('data', (chunk: string) => {
      log.write(chunk);
      const parts = (rest + chunk).split('\n');
      rest = parts.pop()!;
      for (const text of parts) lines.push({ atMs: Date.now(), text });
    });
  }
  const status = await new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
  clearTimeout(bound);
  clearInterval(sampler);
  await new Promise((r) => log.end(r));
  return { status, lines, samples, seconds: (Date.now() - started) / 1000 };
}

/** The clone's test times (both tracks), as scripts/test-times-reporter.js wrote them. */
function testTimes(clone: string): Array<{ file: string; name: string; loadAverage: number }> {
  return ['plain', 'cluster', 'cluster-a', 'cluster-b', 'cluster-argocd', 'cluster-teardown'].flatMap((track) => {
    const file = join(clone, '.cache', `test-times-${track}.jsonl`);
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { file: string; name: string; loadAverage: number });
  });
}

/** How scripts/run-tests.js said it ran the suite (its 'mode:' line), or undefined without one. */
function runMode(text: readonly string[]): string | undefined {
  const prefix = 'run-tests: mode: ';
  return text.find((l) => l.startsWith(prefix))?.slice(prefix.length);
}

async function main(): Promise<void> {
  const arg = process.argv[2];
  const cold = process.argv.slice(3).includes('--cold');
  if (arg === '--render') {
    save(readFlakes());
    return;
  }
  const n = Number(arg);
  if (!Number.isInteger(n) || n < 1 || n > 50) {
    process.stderr.write('usage: npm run soak -- N [--cold] (1-50 full runs) | --render\n');
    process.exit(2);
  }
  const commit = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).stdout.trim();
  const soak = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const clone = join(dirname(REPO_ROOT), 'gracegate-soak');
  const logs = join(REPO_ROOT, '.cache', 'soak');
  mkdirSync(logs, { recursive: true });
  for (let run = 1; run <= n; run++) {
    const logFile = join(logs, `${soak.replace(/:/g, '')}-${run}.log`);
    process.stderr.write(`soak: run ${run} of ${n} on ${commit.slice(0, 7)} (log: ${logFile})\n`);
    const cache = cold ? mkdtempSync(join(tmpdir(), 'gracegate-cold-')) : undefined;
    const r = await oneRun(clone, logFile, cache ? { GRACEGATE_CACHE: cache } : {});
    if (cache) rmSync(cache, { recursive: true, force: true });
    const text = r.lines.map((l) => l.text);
    const times = testTimes(clone);
    const failures = failuresIn(text).map((f) => {
      // The load average when the test ended (scripts/test-times-reporter.js), else when its failure was printed.
      const timed = times.find((t) => t.file.endsWith(f.file) && t.name === f.test);
      const first = r.lines.find((l) => l.text.includes(`\u2716 ${f.test}`));
      return { ...f, loadAverage: timed?.loadAverage ?? sampleAt(r.samples, first?.atMs ?? Date.now()) };
    });
    const values = r.samples.map((s) => s.value);
    const ran = runMode(text);
    const mode = cold && ran !== undefined ? `${ran}, cold (an empty cache)` : ran;
    const record: SoakRun = {
      soak,
      run,
      commit,
      seconds: Math.round(r.seconds),
      passed: r.status === 0,
      loadAverage: { mean: values.reduce((a, b) => a + b, 0) / values.length, max: Math.max(...values) },
      failures,
      ...(mode === undefined ? {} : { mode }),
    };
    if (r.status !== 0 && failures.length === 0)
      failures.push({
        file: '(none named)',
        test: '(the run)',
        assertion: `exit ${r.status}: ${text.slice(-3).join(' / ')}`,
        loadAverage: record.loadAverage.max,
      });
    const f = readFlakes();
    f.runs.push(record);
    for (const failure of failures) {
      const file = failure.file.replace(/^dist\//, '').replace(/\.js$/, '.ts');
      const known = f.flakes.find((x) => x.test === failure.test);
      const where = `soak ${soak} #${run} (load ${failure.loadAverage.toFixed(1)})`;
      if (known) known.seen.push(where);
      else f.flakes.push({ test: failure.test, file, seen: [where], cause: null, fixedBy: null });
    }
    save(f);
    process.stderr.write(`soak: run ${run} ${record.passed ? 'green' : `red (${failures.map((x) => x.test).join('; ')})`} in ${record.seconds} s\n`);
  }
  rmSync(clone, { recursive: true, force: true });
}

main().catch((err: Error) => {
  process.stderr.write(`soak: ${err.message}\n`);
  process.exit(1);
});
