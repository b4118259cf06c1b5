/**
 * The health port while another port is pipelined (issue 34, attack 3): are the LB's probes still
 * answered, and how much later? The real `gracegate hc` process, the attacker in its own process
 * (bench/hc-attacker.ts `pipeline`): N connections, each writing 2,000 `GET`s at once and never
 * reading, reconnecting when closed, spread over addresses so that no address exceeds the port's
 * per-source connection limit (the issue's attacker stayed within them). The probes come from
 * 127.0.0.1 as an LB sends them: a new connection each, `GET /health_check.html`, 2 s timeout
 * (NetScaler's default resptimeout), 10 per second, 100 of them, first without attack, then under
 * each attack. Reported: failed probes, p50/p99, and p99 over the unattacked run's p99 (the goal:
 * 0 failed and a ratio of at most 3).
 *
 * Prints Markdown, and with `--json FILE` writes the rows as JSON. Numbers, not assertions.
 * Run: npm run build && node dist/bench/hc-pipeline-bench.js [label] [--rounds N] [--json FILE]
 * (--rounds: N passes, each row the passes' medians; see combine()).
 * GRACEGATE_HC_BIN=/other/checkout/bin/gracegate.js runs another build's sidecar (before/after).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { startEnvoyStandin } from '../test/support/envoy-standin';
import { spawnHc, tempStateFile, type SpawnedHc } from '../test/support/hc';
import { waitFor } from '../test/support/wait';
import { attacker, fmt, probes, quantile, sleep, type ProbeRun } from './probe-rig';

const PROBES = 100;
const RATE = 10;
const DEPTH = 2_000;

type Port = 'health' | 'witness' | 'metrics';
/** The smallest per-source limit of the ports (the witness's and the metrics', 8): no address holds more. */
const PER_ADDRESS = 8;

const ATTACKS: ReadonlyArray<{ port: Port; connections: number; path: string }> = [
  { port: 'health', connections: 28, path: '/health_check.html' },
  { port: 'health', connections: 112, path: '/health_check.html' },
  { port: 'witness', connections: 28, path: '/wait-closed' },
  { port: 'witness', connections: 112, path: '/wait-closed' },
  { port: 'metrics', connections: 28, path: '/metrics' },
  { port: 'metrics', connections: 112, path: '/metrics' },
];

const addresses = (connections: number) => Array.from({ length: Math.ceil(connections / PER_ADDRESS) }, (_, i) => `127.0.7.${i + 1}`);

interface Row extends ProbeRun {
  attack: string;
  ratio: number | null;
  connects: number | null;
}

/** One pass: the unattacked probes, then each attack, each against a fresh sidecar. */
async function pass(adminUrl: string): Promise<Row[]> {
  const rows: Row[] = [];
  let baseline: number | null = null;
  for (const attack of [null, ...ATTACKS]) {
    process.stderr.write(`hc-pipeline-bench: ${attack ? `${attack.port} ${attack.connections}` : 'no attack'}\n`);
    const hc: SpawnedHc = await spawnHc(['--envoy-admin', adminUrl, '--state-file', tempStateFile(), '--poll-interval', '0.2']);
    try {
      await waitFor('OPEN', 10_000, async () => (await hc.get('/health_check.html')).status === 200);
      const url = attack && { health: hc.healthUrl, witness: hc.witnessUrl, metrics: hc.metricsUrl }[attack.port];
      const running = attack
        ? await attacker(['pipeline', new URL(url!).port, String(attack.connections), addresses(attack.connections).join(','), String(DEPTH), attack.path])
        : undefined;
      if (running) await sleep(2000); // the attack's steady state
      const r = await probes(`${hc.healthUrl}/health_check.html`, PROBES, RATE);
      const stats = running ? await running.stop() : {};
      if (!attack) baseline = r.p99;
      rows.push({
        attack: attack ? `${attack.port} port, ${attack.connections} connections × ${DEPTH} pipelined GET ${attack.path}` : 'none',
        ...r,
        ratio: baseline && !Number.isNaN(r.p99) ? r.p99 / baseline : null,
        connects: typeof stats['connects'] === 'number' ? stats['connects'] : null,
      });
    } finally {
      await hc.stop();
    }
  }
  return rows;
}

/** The middle of `xs` (for 3 passes, the second smallest): probe-rig's quantile at 0.5. */
const median = (xs: number[]): number =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );

/**
 * The passes' rows of one attack as one row: failures summed, p50, p99 and connects the passes'
 * medians, and the ratio the median of each pass's own p99 over that pass's unattacked p99. With
 * 100 probes a p99 is one or two probes, and a single pass on a shared machine makes a 60 ms stall
 * of one probe look like a 6x slowdown in whichever pattern it fell: the median of the passes
 * shows what repeats.
 */
function combine(passes: Row[][]): Row[] {
  return passes[0]!.map((first, i) => {
    const rows = passes.map((p) => p[i]!);
    const ratios = rows.map((r) => r.ratio).filter((x): x is number => x !== null);
    const connects = rows.map((r) => r.connects).filter((x): x is number => x !== null);
    const failures = rows.map((r) => r.failures).filter((f) => f !== '-');
    return {
      attack: first.attack,
      failed: rows.reduce((n, r) => n + r.failed, 0),
      failures: failures.length > 0 ? failures.join('; ') : '-',
      p50: median(rows.map((r) => r.p50)),
      p99: median(rows.map((r) => r.p99)),
      max: Math.max(...rows.map((r) => r.max)),
      ratio: ratios.length > 0 ? median(ratios) : null,
      connects: connects.length > 0 ? median(connects) : null,
    };
  });
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const jsonAt = argv.indexOf('--json');
  const jsonFile = jsonAt === -1 ? undefined : argv[jsonAt + 1];
  const roundsAt = argv.indexOf('--rounds');
  const rounds = roundsAt === -1 ? 1 : Number(argv[roundsAt + 1]);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) throw new Error(`--rounds: expected a whole number 1-20, got ${argv[roundsAt + 1]}`);
  const label = argv.find((a, i) => !a.startsWith('--') && i !== jsonAt + 1 && i !== roundsAt + 1) ?? '';
  const standin = await startEnvoyStandin({});
  const passes: Row[][] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      process.stderr.write(`hc-pipeline-bench: pass ${round} of ${rounds}\n`);
      passes.push(await pass(standin.adminUrl));
    }
  } finally {
    await standin.stop();
  }
  const rows = combine(passes);
  const total = PROBES * rounds;
  const out = [
    `hc pipelining benchmark ${label} — ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, Node ${process.version}, load average ${os.loadavg()[0]!.toFixed(1)}, ${new Date().toISOString().slice(0, 10)}, ${rounds} pass${rounds === 1 ? '' : 'es'} (medians)`,
    '',
    `| attack (probes on the health port) | failed (of ${total}) | failures | p50 ms | p99 ms | p99 / unattacked | attacker connects |`,
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.attack} | ${r.failed} | ${r.failures} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${r.ratio === null ? '-' : r.ratio.toFixed(2)} | ${r.connects ?? '-'} |`,
    ),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  if (jsonFile) {
    fs.writeFileSync(jsonFile, `${JSON.stringify({ label, date: new Date().toISOString(), loadAverage: os.loadavg()[0], rounds, rows, passes }, null, 2)}\n`);
  }
}

main().catch((err: Error) => {
  process.stderr.write(`${err.stack ?? err.message}\n`);
  process.exit(1);
});
