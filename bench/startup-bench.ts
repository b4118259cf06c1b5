/**
 * Start-up of the light commands, as ratios (the machine's speed and load cancel out):
 *   1. `gracegate plan examples/haproxy.yaml`, CPU time over `node -e 0`'s (goal: at most 2), and the
 *      same for issue 48's F5 spec (service-down-action reset, p99 45 s), where every order loses
 *      requests and the plan also ranks the LB settings that would remove the loss;
 *   2. `gracegate post-render` of the istio/gateway 1.27.9 chart, CPU time over `kubectl kustomize`
 *      applying the equivalent Kustomize component to the same render (goal: at most 1);
 *   3. `gracegate hc`: wall time from spawn to the first `GET /live` 200, over `node -e 0`'s wall
 *      time, and its resident memory once idle (VmRSS at 3 s and at 10 s; goal: at most 50 MiB).
 * CPU time is the child's user + system time (bash's `times`), medians of interleaved runs: each
 * round runs every command once, so a burst of load falls on all of them alike.
 *
 * Run: npm run build && bash scripts/prepare-test-env.sh && node dist/bench/startup-bench.js [ROUNDS] [--write]
 * (--write records the table in docs/benchmarks.json, which docs/benchmarks.md renders).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kustomizeComponent } from '../src/delivery/kustomize/component';
import { loadPodChanges } from '../src/cli/load-pod-changes';
import { gatewayChart } from '../test/support/fixtures';
import { REPO_ROOT, TOOLS } from '../test/support/repo';
import { writeBenchResult } from '../test/support/bench-results';

const GRACEGATE = join(REPO_ROOT, 'bin', 'gracegate.js');
const SPEC = join(REPO_ROOT, 'examples', 'haproxy.yaml');
const ARGS = process.argv.slice(2).filter((a) => a !== '--write');
const ROUNDS = Number(ARGS[0] ?? 21);

/** The child's CPU time (user + system) in milliseconds, stdin from `input` (a file) or nothing. */
function cpuMs(cmd: string[], input = '/dev/null'): number {
  const r = spawnSync('bash', ['-c', '"$@" < "$GG_INPUT" > /dev/null 2>&1 || exit 3; times', 'cpu', ...cmd], {
    encoding: 'utf8',
    env: { ...process.env, GG_INPUT: input },
  });
  if (r.status !== 0) throw new Error(`${cmd.join(' ')} failed (${r.status})`);
  // `times`: the shell's own user/system, then its children's: "0m0.120s 0m0.031s".
  const children = r.stdout
    .trim()
    .split('\n')[1]!
    .split(/\s+/)
    .map((t) => {
      const m = /^(\d+)m([\d.]+)s$/.exec(t)!;
      return Number(m[1]) * 60_000 + Number(m[2]) * 1000;
    });
  return children[0]! + children[1]!;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function get(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `gracegate hc` on fixed free ports: ms from spawn to the first /live 200, and VmRSS (MiB) at 3 s and 10 s. */
async function hcRun(port: number): Promise<{ firstLiveMs: number; rss3: number; rss10: number }> {
  const state = join(mkdtempSync(join(tmpdir(), 'gracegate-hc-bench-')), 'state.json');
  const t0 = process.hrtime.bigint();
  const proc = spawn(
    process.execPath,
    [
      GRACEGATE,
      'hc',
      '--health-port',
      String(port),
      '--control-port',
      String(port + 1),
      '--witness-port',
      String(port + 2),
      '--metrics-port',
      String(port + 3),
      '--envoy-admin',
      'http://127.0.0.1:9',
      '--state-file',
      state,
    ],
    { stdio: 'ignore' },
  );
  try {
    let firstLiveMs = NaN;
    for (;;) {
      if ((await get(`http://127.0.0.1:${port}/live`)) === 200) {
        firstLiveMs = Number(process.hrtime.bigint() - t0) / 1e6;
        break;
      }
      await sleep(2);
    }
    const rss = () => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'))![1]) / 1024;
    await sleep(3000 - firstLiveMs);
    const rss3 = rss();
    await sleep(7000);
    return { firstLiveMs, rss3, rss10: rss() };
  } finally {
    proc.kill('SIGKILL');
  }
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'gracegate-startup-bench-'));
  try {
    // The post-render input: the real chart, rendered as helm would hand it over.
    const render = spawnSync(TOOLS.helm3, ['template', 'igw-public', gatewayChart('1.27.9'), '-n', 'istio-ingress', '--set', 'autoscaling.enabled=false'], {
      encoding: 'utf8',
    });
    if (render.status !== 0) throw new Error(render.stderr);
    const input = join(work, 'all.yaml');
    writeFileSync(input, render.stdout);
    const component = join(work, 'gracegate');
    const app = join(work, 'app');
    mkdirSync(component);
    mkdirSync(app);
    for (const [path, text] of Object.entries(kustomizeComponent(loadPodChanges(SPEC, { log: () => undefined })))) writeFileSync(join(component, path), text);
    writeFileSync(join(app, 'all.yaml'), render.stdout);
    writeFileSync(join(app, 'kustomization.yaml'), 'resources: [all.yaml]\ncomponents: [../gracegate]\n');

    // Issue 48's F5 spec: every order loses, so the plan re-plans each LB setting the vendor offers.
    const f5 = join(work, 'f5-reset.yaml');
    writeFileSync(
      f5,
      readFileSync(join(REPO_ROOT, 'examples', 'f5.yaml'), 'utf8')
        .replace(/serviceDownAction: none.*/, 'serviceDownAction: reset')
        .replace(/longRequestP99Seconds: \d+/, 'longRequestP99Seconds: 45'),
    );
    const runs: Record<string, { cmd: string[]; input?: string; ms: number[] }> = {
      'node -e 0': { cmd: [process.execPath, '-e', '0'], ms: [] },
      'gracegate plan': { cmd: [process.execPath, GRACEGATE, 'plan', SPEC], ms: [] },
      'gracegate plan (F5 reset)': { cmd: [process.execPath, GRACEGATE, 'plan', f5, '--fail-on', 'none'], ms: [] },
      'gracegate post-render': { cmd: [process.execPath, GRACEGATE, 'post-render', '--spec', SPEC], input, ms: [] },
      'kubectl kustomize': { cmd: [TOOLS.kubectl, 'kustomize', app], ms: [] },
    };
    for (let i = 0; i < ROUNDS; i++) for (const r of Object.values(runs)) r.ms.push(cpuMs(r.cmd, r.input));
    const cpu = Object.fromEntries(Object.entries(runs).map(([k, r]) => [k, median(r.ms)]));

    const nodeWall: number[] = [];
    const hc: Array<{ firstLiveMs: number; rss3: number; rss10: number }> = [];
    for (let i = 0; i < 5; i++) {
      const t0 = process.hrtime.bigint();
      spawnSync(process.execPath, ['-e', '0']);
      nodeWall.push(Number(process.hrtime.bigint() - t0) / 1e6);
      hc.push(await hcRun(24100 + i * 10));
    }
    const firstLive = median(hc.map((h) => h.firstLiveMs));
    const out = [
      `node ${process.version}, ${process.platform}/${process.arch}; medians of ${ROUNDS} interleaved rounds (CPU), 5 (hc)`,
      '',
      '| ratio | measured | goal |',
      '|---|---|---|',
      `| \`gracegate plan\` CPU / \`node -e 0\` CPU | ${(cpu['gracegate plan']! / cpu['node -e 0']!).toFixed(2)} (${cpu['gracegate plan']!.toFixed(0)} / ${cpu['node -e 0']!.toFixed(0)} ms) | ≤ 2 |`,
      `| \`gracegate plan\` (F5 reset: every order loses, LB settings ranked) CPU / \`node -e 0\` CPU | ${(cpu['gracegate plan (F5 reset)']! / cpu['node -e 0']!).toFixed(2)} (${cpu['gracegate plan (F5 reset)']!.toFixed(0)} / ${cpu['node -e 0']!.toFixed(0)} ms) | ≤ 2 |`,
      `| \`gracegate post-render\` CPU / \`kubectl kustomize\` CPU | ${(cpu['gracegate post-render']! / cpu['kubectl kustomize']!).toFixed(2)} (${cpu['gracegate post-render']!.toFixed(0)} / ${cpu['kubectl kustomize']!.toFixed(0)} ms) | ≤ 1 |`,
      `| \`gracegate hc\` to the first /live 200 / \`node -e 0\` wall | ${(firstLive / median(nodeWall)).toFixed(2)} (${firstLive.toFixed(0)} / ${median(nodeWall).toFixed(0)} ms) | |`,
      `| \`gracegate hc\` idle VmRSS at 3 s, at 10 s | ${median(hc.map((h) => h.rss3)).toFixed(1)} MiB, ${median(hc.map((h) => h.rss10)).toFixed(1)} MiB | ≤ 50 MiB |`,
    ];
    process.stdout.write(`${out.join('\n')}\n`);
    if (process.argv.includes('--write')) writeBenchResult('startup', 'node dist/bench/startup-bench.js --write', out.join('\n'));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

void main();
