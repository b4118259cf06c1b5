/**
 * Lint benchmark: gracegate lint on 10,000 objects (copies, renamed, of the real istio/gateway
 * 1.27.9 render with default values and of the same chart with gracegate's overlay and manifests),
 * next to kube-score on the same file; and the YAML reading alone, js-yaml (what lint uses) next to
 * yaml (what post-render uses), the reason lint reads with js-yaml. Prints a Markdown table.
 *
 * Run: npm run build && bash scripts/prepare-test-env.sh && node dist/bench/lint-bench.js [--write]
 * Medians of 5 runs (3 for kube-score; LINT_BENCH_RUNS / LINT_BENCH_KUBE_SCORE_RUNS set fewer); each
 * CLI run is a fresh process, as a CI step runs it. Target: under 2 s for the whole `gracegate lint`
 * run (start-up included) on 10,000 objects. --write puts the speed into docs/lint-comparison.json,
 * from which docs/lint.md's comparison table is rendered (test/lint/charts.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { lintDocuments } from '../src/lint/lint';
import { readManifests } from '../src/lint/manifests';
import { manifestsYaml } from '../src/delivery/manifests';
import { valuesOverlayYaml } from '../src/delivery/helm-values/overlay';
import { planGateway } from '../src/plan/plan-gateway';
import { podChanges } from '../src/pod/pod-changes';
import { parseGatewaySpec } from '../src/schema/parse-spec';
import { gatewayChart } from '../test/support/fixtures';

const ROOT = join(__dirname, '..', '..');
const HELM = join(ROOT, '.cache/tools/v31/helm/helm');
const KUBE_SCORE = join(ROOT, '.cache/tools/kube-score-v1.20.0/kube-score');
const CHART = gatewayChart('1.27.9');
const GRACEGATE = join(ROOT, 'bin/gracegate.js');
const OBJECTS = 10_000;
const RUNS = Number(process.env.LINT_BENCH_RUNS ?? 5);
/** kube-score takes tens of seconds on this input: fewer runs. */
const KUBE_SCORE_RUNS = Number(process.env.LINT_BENCH_KUBE_SCORE_RUNS ?? 3);
const RESULTS = join(ROOT, 'docs', 'lint-comparison.json');

function sh(cmd: string, args: string[], okStatus: number[] = [0]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1024 * 1024 * 1024, timeout: 600_000 });
  if (r.status === null || !okStatus.includes(r.status)) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr || r.error}`);
  return r.stdout;
}

/**
 * Median wall and CPU time (user + system, ms, from bash's `times` for its children) of a command:
 * on a shared machine the wall time also holds the waits for a core, the CPU time does not.
 */
function measure(runs: number, cmd: string[]): { wall: number; cpu: number; stdout: string } {
  const walls: number[] = [];
  const cpus: number[] = [];
  let stdout = '';
  const quoted = cmd.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const out = sh('bash', ['-c', `${quoted} > "$OUT" || [ $? = 1 ]; times`], [0]);
    walls.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const child = out.trim().split('\n')[1]!;
    const [user, sys] = [...child.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60_000 + Number(m[2]) * 1000);
    cpus.push(user! + sys!);
    stdout = readFileSync(process.env.OUT!, 'utf8');
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return { wall: median(walls), cpu: median(cpus), stdout };
}

/** Median wall time in milliseconds of `runs` calls. */
function time(runs: number, fn: () => void): number {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

function main(): void {
  const work = mkdtempSync(join(tmpdir(), 'gracegate-lint-bench-'));
  try {
    const specPath = join(ROOT, 'examples/haproxy.yaml');
    const changes = podChanges(planGateway(parseGatewaySpec(readFileSync(specPath, 'utf8'), specPath)));
    const overlay = join(work, 'overlay.yaml');
    writeFileSync(overlay, valuesOverlayYaml(changes, { kind: 'istio-gateway', version: '1.27.9' }));
    const plain = sh(HELM, ['template', 'igw', CHART, '--namespace', 'istio-ingress']);
    const ours = `${sh(HELM, ['template', 'igw-public', CHART, '--namespace', 'istio-ingress', '-f', overlay])}---\n${manifestsYaml(changes)}`;
    const perCopy = (t: string) => readManifests(t, 'count').filter((d) => d.value != null).length;
    const pieces: string[] = [];
    let objects = 0;
    for (let i = 0; objects < OBJECTS; i++) {
      const [text, name] = i % 2 === 0 ? [plain, 'igw'] : [ours, 'igw-public'];
      const copy = text.replace(new RegExp(`\\b${name}\\b`, 'g'), `${name}-${i}`);
      pieces.push(copy);
      objects += perCopy(copy);
    }
    const file = join(work, 'objects.yaml');
    const stream = pieces.join('---\n');
    writeFileSync(file, stream);

    process.env.OUT = join(work, 'out.json');
    const lint = measure(RUNS, [process.execPath, GRACEGATE, 'lint', file, '--format', 'json', '--fail-on', 'none']);
    const findings = (JSON.parse(lint.stdout) as { findings: unknown[] }).findings.length;
    const cli = lint.wall;
    const inProcess = time(RUNS, () => lintDocuments(readManifests(stream, file)));
    const readJsYaml = time(RUNS, () => readManifests(stream, file));
    const readYaml = time(RUNS, () => parseAllDocuments(stream).map((d) => d.toJS()));
    const kubeScore = measure(KUBE_SCORE_RUNS, [KUBE_SCORE, 'score', file, '--output-format', 'json']);
    const mb = (Buffer.byteLength(stream) / 1024 / 1024).toFixed(1);
    console.log(`Lint of ${objects} objects (${mb} MiB; ${findings} findings), medians of ${RUNS} runs, ms:\n`);
    console.log('| what | wall ms | CPU ms | wall vs gracegate lint (CLI) |');
    console.log('|---|---|---|---|');
    const row = (what: string, ms: number, cpu?: number) =>
      console.log(`| ${what} | ${ms.toFixed(0)} | ${cpu === undefined ? '' : cpu.toFixed(0)} | ${(ms / cli).toFixed(2)} |`);
    row('`gracegate lint FILE --format json` (fresh process, start-up included)', cli, lint.cpu);
    row('lint in process (read + rules + locate)', inProcess);
    row('reading alone: js-yaml events + values (what lint uses)', readJsYaml);
    row('reading alone: yaml parseAllDocuments + toJS (what post-render uses)', readYaml);
    row(`\`kube-score score FILE -o json\` v1.20.0 (median of ${KUBE_SCORE_RUNS})`, kubeScore.wall, kubeScore.cpu);
    const load = require('node:os').loadavg()[0] as number;
    console.log(`\nkube-score / gracegate lint: ${(kubeScore.cpu / lint.cpu).toFixed(1)} x the CPU, ${(kubeScore.wall / cli).toFixed(1)} x the wall time.`);
    if (process.argv.includes('--write')) {
      const results = JSON.parse(readFileSync(RESULTS, 'utf8'));
      results.timing = {
        objects,
        mib: Number(mb),
        runs: RUNS,
        load: Number(require('node:os').loadavg()[0].toFixed(1)),
        cpus: require('node:os').cpus().length,
        findings,
        gracegate: { wallMs: Math.round(cli), cpuMs: Math.round(lint.cpu) },
        inProcessMs: Math.round(inProcess),
        readJsYamlMs: Math.round(readJsYaml),
        readYamlMs: Math.round(readYaml),
        kubeScore: { wallMs: Math.round(kubeScore.wall), cpuMs: Math.round(kubeScore.cpu), runs: KUBE_SCORE_RUNS },
      };
      writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
      console.log(`written: ${RESULTS}`);
    }
    console.log(
      `\nTarget: gracegate lint under 2000 ms: ${cli < 2000 ? 'met' : 'NOT met'} (wall ${cli.toFixed(0)} ms, CPU ${lint.cpu.toFixed(0)} ms; load average ${load.toFixed(1)} on ${require('node:os').cpus().length} CPUs).`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main();
