/**
 * Post-render benchmark: gracegate post-render on a typical gateway chart render and on a
 * 10,000-object input, next to `kubectl kustomize` applying the equivalent Kustomize component
 * to the same input; and the CLI's start-up next to `node -e 0`. Prints a Markdown table.
 *
 * Run: npm run build && bash scripts/prepare-test-env.sh && node dist/bench/post-render-bench.js [--write]
 * (--write records the tables in docs/benchmarks.json, which docs/delivery.md renders).
 * It takes minutes (7 to 9 on 2 vCPUs), nearly all of them the one `kubectl kustomize` run on
 * 10,000 objects; it says so when it starts.
 * Medians of several runs (15 on the typical input; 5, and one kubectl kustomize run, at 10,000
 * objects); each CLI run is a fresh process, as helm runs a post-renderer.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kustomizeComponent } from '../src/delivery/kustomize/component';
import { loadPodChanges } from '../src/cli/load-pod-changes';
import { postRender } from '../src/delivery/post-render/post-render';
import { TargetRule } from '../src/delivery/target';
import { writeBenchResult } from '../test/support/bench-results';

const ROOT = join(__dirname, '..', '..');
const HELM = join(ROOT, '.cache/tools/v31/helm/helm');
const KUBECTL = join(ROOT, '.cache/tools/v33/kubectl/kubectl');
const SPEC = join(ROOT, 'examples/haproxy.yaml');
const GRACEGATE = join(ROOT, 'bin/gracegate.js');

/** kubectl kustomize is slow on big inputs (minutes at 10,000 objects): one bounded run there. */
const KUSTOMIZE_TIMEOUT_MS = 20 * 60_000;

class TimedOut extends Error {}

function sh(cmd: string, args: string[], input?: string, timeout = 300_000): string {
  const r = spawnSync(cmd, args, { input, encoding: 'utf8', maxBuffer: 1024 * 1024 * 1024, timeout });
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT') throw new TimedOut();
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr || r.error}`);
  return r.stdout;
}

function timeOrTimeout(runs: number, fn: () => void): string {
  try {
    return time(runs, fn).toFixed(0);
  } catch (err) {
    if (err instanceof TimedOut) return `> ${KUSTOMIZE_TIMEOUT_MS} (timed out)`;
    throw err;
  }
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

function objectCount(text: string): number {
  return text.split(/^---$/m).filter((p) => /^kind:/m.test(p)).length;
}

/** The typical render plus ConfigMaps up to `total` objects: a big umbrella release. */
function bigInput(typical: string, total: number): string {
  const have = objectCount(typical);
  const extra: string[] = [];
  for (let i = 0; i < total - have; i++) {
    extra.push(
      `---\n# Source: umbrella/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-${i}\n  namespace: istio-ingress\n  labels:\n    app.kubernetes.io/part-of: umbrella\ndata:\n  key: "value-${i}"\n`,
    );
  }
  return `${typical}${extra.join('')}`;
}

function main(): void {
  process.stderr.write('bench: this takes minutes (7 to 9 on 2 vCPUs), nearly all of them one `kubectl kustomize` run on 10,000 objects\n');
  const work = mkdtempSync(join(tmpdir(), 'gracegate-bench-'));
  try {
    const typical = sh(HELM, [
      'template',
      'igw-public',
      join(ROOT, 'test/fixtures/charts/istio-gateway-1.26-like'),
      '-n',
      'istio-ingress',
      '--set',
      'autoscaling.enabled=false',
    ]);
    const big = bigInput(typical, 10_000);
    const changes = loadPodChanges(SPEC, { log: () => undefined });
    const component = join(work, 'gracegate');
    mkdirSync(component);
    for (const [path, text] of Object.entries(kustomizeComponent(changes))) writeFileSync(join(component, path), text);

    const rows: string[][] = [];
    for (const [label, input, runs, kustomizeRuns] of [
      [`typical gateway chart (${objectCount(typical)} objects)`, typical, 15, 15],
      [`${objectCount(big)} objects`, big, 5, 1],
    ] as const) {
      const app = join(work, `app-${runs}`);
      mkdirSync(app);
      writeFileSync(join(app, 'all.yaml'), input);
      writeFileSync(join(app, 'kustomization.yaml'), 'resources: [all.yaml]\ncomponents: [../gracegate]\n');
      const inProcess = time(runs, () => postRender(input, changes, { target: TargetRule.container('istio-proxy') }));
      const cli = time(runs, () => sh(process.execPath, [GRACEGATE, 'post-render', '--spec', SPEC], input));
      const kustomize = timeOrTimeout(kustomizeRuns, () => sh(KUBECTL, ['kustomize', app], undefined, KUSTOMIZE_TIMEOUT_MS));
      rows.push([label, `${(input.length / 1024).toFixed(0)} KiB`, inProcess.toFixed(0), cli.toFixed(0), kustomize]);
      process.stderr.write(`bench: ${label} done\n`);
    }
    const nodeStart = time(15, () => sh(process.execPath, ['-e', '0']));
    const cliStart = time(15, () => sh(process.execPath, [GRACEGATE, 'post-render', '--help']));

    const out = [
      `node ${process.version}, ${process.platform}/${process.arch}; medians, milliseconds`,
      '',
      '| input | size | postRender() in process | `gracegate post-render` (whole process) | `kubectl kustomize` with the component |',
      '|---|---|---|---|---|',
      ...rows.map((r) => `| ${r.join(' | ')} |`),
      '',
      '| start-up | ms |',
      '|---|---|',
      `| \`node -e 0\` | ${nodeStart.toFixed(0)} |`,
      `| \`gracegate post-render --help\` | ${cliStart.toFixed(0)} |`,
    ];
    process.stdout.write(`${out.join('\n')}\n`);
    if (process.argv.includes('--write')) writeBenchResult('post-render', 'node dist/bench/post-render-bench.js --write', out.join('\n'));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main();
