/**
 * Many gateways: `gracegate synth DIR --out OUT` on 100, 1,000 and 5,000 specs in one process (wall
 * time, CPU time, peak RSS, and a second run over the unchanged tree), then 1,000 separate
 * `gracegate synth FILE --out DIR` processes, one per spec, as a loop in CI would run them. Prints
 * Markdown tables.
 *
 * Run: npm run build && node dist/bench/synth-fleet.js [--sizes 100,1000,5000] [--processes 1000] [--write]
 * (--write records the tables in docs/benchmarks.json, which docs/delivery.md renders).
 * About 8 minutes on 2 busy vCPUs, most of it the separate processes (--processes 0 skips them).
 * The specs cycle through examples/*.yaml with their own names, ten per directory level, a third
 * of them on Kubernetes 1.33 (native sidecar).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeOnExit } from '../test/support/bench-results';

const ROOT = join(__dirname, '..', '..');
const CLI = join(ROOT, 'bin/gracegate.js');
const PRELOAD = join(__dirname, 'report-usage.js');

type Usage = { wallMs: number; userMs: number; systemMs: number; maxRssKiB: number };

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : fallback;
}

/** One gracegate process, timed from outside, its CPU and peak RSS reported from inside. */
function gracegate(args: string[]): Usage {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ['-r', PRELOAD, CLI, ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`gracegate ${args.join(' ')} exited ${r.status}:\n${r.stderr.slice(0, 2000)}`);
  const line = r.stderr.split('\n').find((l) => l.startsWith('GRACEGATE_BENCH_USAGE '));
  if (!line) throw new Error('no usage line from the preload');
  return { wallMs, ...(JSON.parse(line.slice('GRACEGATE_BENCH_USAGE '.length)) as Omit<Usage, 'wallMs'>) };
}

/** n specs under dir: examples cycled, unique names, `r<i % 10>/z<i % 7>/gw-<i>.yaml`. */
function writeSpecs(dir: string, n: number): string[] {
  // Gateways only (a GracefulWorkload is not a gateway of the fleet).
  const examples = readdirSync(join(ROOT, 'examples'))
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => readFileSync(join(ROOT, 'examples', f), 'utf8'))
    .filter((text) => /^kind: GracefulGateway\s*$/m.test(text));
  const files: string[] = [];
  for (let i = 0; i < n; i++) {
    const sub = join(dir, `r${i % 10}`, `z${i % 7}`);
    mkdirSync(sub, { recursive: true });
    let text = examples[i % examples.length]!.replace(/^( {2}name: )\S+/m, `$1gw-${i}`);
    if (i % 3 === 0 && !/^ {2}kubernetesVersion:/m.test(text)) text = text.replace(/^spec:\n/m, 'spec:\n  kubernetesVersion: "1.33"\n');
    const file = join(sub, `gw-${i}.yaml`);
    writeFileSync(file, text);
    files.push(file);
  }
  return files;
}

const fmt = (ms: number) => (ms / 1000).toFixed(2);

function main(): void {
  const args = process.argv.slice(2).filter((a) => a !== '--write');
  writeOnExit('synth-fleet', ['node dist/bench/synth-fleet.js', ...args, '--write'].join(' '));
  const sizes = flag('sizes', '100,1000,5000').split(',').map(Number);
  const processes = Number(flag('processes', '1000'));
  const work = mkdtempSync(join(tmpdir(), 'gracegate-synth-fleet-'));
  process.stderr.write(`synth-fleet: sizes ${sizes.join(', ')}; ${processes} separate processes after (minutes). Work dir ${work}\n`);
  const loadBefore = loadavg()[0]!.toFixed(1);
  const print = (line: string) => console.log(line);
  try {
    const rows: string[] = [];
    let perGatewayAt1000: number | undefined;
    const results: Array<{ n: number; fresh: Usage; again: Usage }> = [];
    for (const n of sizes) {
      const specs = join(work, `specs-${n}`);
      writeSpecs(specs, n);
      const out = join(work, `out-${n}`);
      const fresh = gracegate(['synth', specs, '--out', out]);
      const again = gracegate(['synth', specs, '--out', out]);
      results.push({ n, fresh, again });
      if (n === 1000) perGatewayAt1000 = fresh.wallMs / n;
      rmSync(out, { recursive: true, force: true });
      rmSync(specs, { recursive: true, force: true });
    }
    const base = perGatewayAt1000 ?? results[0]!.fresh.wallMs / results[0]!.n;
    results.forEach(({ n, fresh, again }, i) => {
      // The marginal cost: what the gateways added since the previous size cost each (start-up cancels out).
      const prev = results[i - 1];
      const marginal = prev ? ((fresh.wallMs - prev.fresh.wallMs) / (n - prev.n)).toFixed(2) : '-';
      rows.push(
        `| ${n.toLocaleString('en')} | ${fmt(fresh.wallMs)} | ${fmt(fresh.userMs)} + ${fmt(fresh.systemMs)} | ${(fresh.wallMs / n).toFixed(2)} | ${marginal} | ${(fresh.wallMs / n / base).toFixed(2)} | ${(fresh.maxRssKiB / 1024).toFixed(0)} | ${fmt(again.wallMs)} |`,
      );
    });
    print(`\n\`gracegate synth DIR --out OUT\`, one process (load average ${loadBefore} at start):\n`);
    print(
      '| specs | wall s | CPU s (user + system) | ms per gateway | marginal ms per gateway | per gateway / at 1,000 | peak RSS MiB | again, unchanged tree: wall s |',
    );
    print('|---|---|---|---|---|---|---|---|');
    for (const r of rows) print(r);

    if (processes > 0) {
      const specs = join(work, 'specs-processes');
      const files = writeSpecs(specs, processes);
      let wall = 0;
      let cpu = 0;
      let rss = 0;
      files.forEach((file, i) => {
        const u = gracegate(['synth', file, '--out', join(work, 'out-processes', String(i))]);
        wall += u.wallMs;
        cpu += u.userMs + u.systemMs;
        rss = Math.max(rss, u.maxRssKiB);
      });
      const inOne = results.find((r) => r.n === processes)?.fresh.wallMs;
      print(`\n${processes.toLocaleString('en')} separate \`gracegate synth FILE\` processes (load average ${loadavg()[0]!.toFixed(1)} at the end):\n`);
      print('| runs | wall s | CPU s | ms per gateway | peak RSS MiB (one process) | vs one process over the same count |');
      print('|---|---|---|---|---|---|');
      print(
        `| ${processes} | ${fmt(wall)} | ${fmt(cpu)} | ${(wall / processes).toFixed(1)} | ${(rss / 1024).toFixed(0)} | ${inOne ? `${(wall / inOne).toFixed(1)} x` : 'n/a'} |`,
      );
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main();
