/**
 * `gracegate measure p99` on a 1 GB access log: is it streaming at disk-speed order of magnitude,
 * in constant memory? Writes a log in Istio's default text format to /tmp (lines like the ones a
 * real Envoy wrote in test/measure/measure-p99.test.ts, with varied durations, paths and routes; 1 in 500 a WebSocket
 * upgrade), then times, on the same warm file:
 *   - `dd iflag=direct` (the disk itself, bypassing the page cache),
 *   - `wc -l` (reading and counting lines from the page cache),
 *   - `gracegate measure p99 --access-log FILE --format json` (a fresh Node process),
 * and reports MB/s, the ratio, and each process's peak resident memory (GNU time's %M), for the
 * full file and for a tenth of it; and once more on the full file with V8's old space capped at
 * 32 MB: that it finishes at all shows the live set is bounded (the uncapped peak is V8's heap
 * headroom, not data kept).
 * Numbers, not assertions. Run: npm run build && node dist/bench/measure-bench.js [GB] [--write]
 * (--write records what it prints in docs/benchmarks.json, which docs/benchmarks.md renders).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../test/support/repo';
import { writeBenchResult } from '../test/support/bench-results';

const GB = Number(process.argv.slice(2).filter((a) => a !== '--write')[0] ?? 1);
const FILE = '/tmp/gracegate-measure-bench.log';
const TENTH = '/tmp/gracegate-measure-bench-tenth.log';

/** A deterministic generator: the same file on every run. */
function* lines(bytes: number): Generator<string> {
  let seed = 42;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const routes = ['api', 'checkout', 'search', 'static', 'upload'];
  let written = 0;
  let t = Date.UTC(2026, 10, 30, 10, 0, 0);
  while (written < bytes) {
    t += Math.floor(rand() * 3);
    const route = routes[Math.floor(rand() * routes.length)]!;
    const upgrade = rand() < 0.002;
    // Mostly fast, a long tail: 90 % under 100 ms, 9.9 % up to 5 s, 0.1 % up to 2 min.
    const r = rand();
    const duration = upgrade
      ? Math.floor(rand() * 600_000)
      : r < 0.9
        ? Math.floor(rand() * 100)
        : r < 0.999
          ? Math.floor(rand() * 5000)
          : Math.floor(rand() * 120_000);
    const code = upgrade ? 101 : rand() < 0.01 ? 503 : 200;
    const line = `[${new Date(t).toISOString()}] "GET /${route}/items/${Math.floor(rand() * 1e6)}?page=${Math.floor(rand() * 50)} HTTP/1.1" ${code} - via_upstream - "-" 0 ${Math.floor(rand() * 20000)} ${duration} ${duration} "203.0.113.${Math.floor(rand() * 250)}" "Mozilla/5.0 (X11; Linux x86_64) bench" "${Math.floor(rand() * 1e12).toString(16)}-0000-4000-8000-000000000000" "shop.example.com" "10.0.${Math.floor(rand() * 250)}.${Math.floor(rand() * 250)}:8080" outbound|8080||${route}.shop.svc.cluster.local 10.0.0.7:41234 10.0.0.7:8080 203.0.113.9:53211 - ${route}\n`;
    written += line.length;
    yield line;
  }
}

function write(file: string, bytes: number): void {
  if (fs.existsSync(file) && Math.abs(fs.statSync(file).size - bytes) < 4096) return;
  const fd = fs.openSync(file, 'w');
  let buffer = '';
  for (const line of lines(bytes)) {
    buffer += line;
    if (buffer.length > 4 * 1024 * 1024) {
      fs.writeSync(fd, buffer);
      buffer = '';
    }
  }
  fs.writeSync(fd, buffer);
  fs.closeSync(fd);
}

/** Runs under GNU time: wall seconds and peak RSS (KiB). */
function timed(cmd: string[]): { seconds: number; maxRssKiB: number; stdout: string } {
  const r = spawnSync('/usr/bin/time', ['-f', 'gracegate-bench %e %M', ...cmd], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${cmd.join(' ')} failed: ${r.stderr}`);
  const m = /gracegate-bench ([\d.]+) (\d+)/.exec(r.stderr);
  if (!m) throw new Error(`no timing in: ${r.stderr}`);
  return { seconds: Number(m[1]), maxRssKiB: Number(m[2]), stdout: r.stdout };
}

function best(cmd: string[], runs = 3) {
  const all = Array.from({ length: runs }, () => timed(cmd));
  return { ...all.sort((a, b) => a.seconds - b.seconds)[0]!, maxRssKiB: Math.max(...all.map((x) => x.maxRssKiB)) };
}

function main(): void {
  const bytes = Math.round(GB * 1024 ** 3);
  write(FILE, bytes);
  write(TENTH, Math.round(bytes / 10));
  const cli = path.join(REPO_ROOT, 'bin', 'gracegate.js');
  const rows: string[] = [];
  let json: Record<string, unknown> = {};
  for (const file of [FILE, TENTH]) {
    const size = fs.statSync(file).size;
    const mb = size / 1e6;
    const wc = best(['wc', '-l', file]);
    const measure = best([process.execPath, cli, 'measure', 'p99', '--access-log', file, '--format', 'json'], file === FILE ? 2 : 3);
    if (file === FILE) json = JSON.parse(measure.stdout) as Record<string, unknown>;
    rows.push(
      `| ${(size / 1024 ** 2).toFixed(0)} MiB, ${wc.stdout.trim().split(' ')[0]} lines | ${wc.seconds.toFixed(2)} s, ${(mb / wc.seconds).toFixed(0)} MB/s, ${(wc.maxRssKiB / 1024).toFixed(1)} MiB | ${measure.seconds.toFixed(2)} s, ${(mb / measure.seconds).toFixed(0)} MB/s, ${(measure.maxRssKiB / 1024).toFixed(0)} MiB | ${(measure.seconds / wc.seconds).toFixed(1)} |`,
    );
  }
  // What it prints is what --write records (docs/benchmarks.json), the note on the files aside.
  const printed: string[] = [];
  const say = (text: string): void => {
    console.log(text);
    printed.push(text);
  };
  say(`# gracegate measure p99 on a ${GB} GB access log (Istio text format; warm page cache; best of runs)\n`);
  say('| file | `wc -l` (time, MB/s, peak RSS) | `gracegate measure p99` (time, MB/s, peak RSS) | time ratio |');
  say('|---|---|---|---|');
  for (const row of rows) say(row);
  const capped = timed([process.execPath, '--max-old-space-size=32', cli, 'measure', 'p99', '--access-log', FILE, '--format', 'json']);
  const cappedJson = JSON.parse(capped.stdout) as Record<string, unknown>;
  say(
    `| same 1st file, node --max-old-space-size=32 | | ${capped.seconds.toFixed(2)} s, ${(fs.statSync(FILE).size / 1e6 / capped.seconds).toFixed(0)} MB/s, ${(capped.maxRssKiB / 1024).toFixed(0)} MiB | same p99: ${String(cappedJson['p99Seconds'] === json['p99Seconds'])} |`,
  );
  const dd = spawnSync('dd', [`if=${FILE}`, 'of=/dev/null', 'bs=4M', 'iflag=direct'], { encoding: 'utf8' });
  say(`\ndisk, uncached (dd iflag=direct): ${/copied, ([\d.]+ s), ([\d.]+ [MG]B\/s)/.exec(dd.stderr)?.slice(1).join(', ') ?? dd.stderr.trim()}`);
  say(
    `\nmeasured on the full file: samples ${String(json['samples'])}, p99 ${String(json['p99Seconds'])} s, recommended ${String(json['recommendedLongRequestP99Seconds'])}, streams ${JSON.stringify((json['streams'] as Record<string, unknown> | null)?.['count'])}`,
  );
  if (process.argv.includes('--write')) writeBenchResult('measure', `node dist/bench/measure-bench.js ${GB} --write`, printed.join('\n'));
  console.log(`\nThe files stay in /tmp for another run (${FILE}, ${TENTH}); delete them when done.`);
}

main();
