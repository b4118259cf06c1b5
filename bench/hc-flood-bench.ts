/**
 * The health port under the floods of issue 18 (items 3 and 16): can the LB's probes still get
 * an answer? The real `gracegate hc` process, the attacker in its own process
 * (bench/hc-attacker.ts), probes from this process as an LB sends them: a new connection each,
 * `GET /health_check.html`, 2 s timeout (NetScaler's default resptimeout), 10 per second.
 *
 *   - 256 slowloris connections (a header line a second, never finished), reconnecting when closed;
 *   - 3000 connections that send nothing, reconnecting when closed;
 *   each from another address than the probes (127.0.0.2; an LB probes from its own addresses),
 *   and once from the probes' own address (where per-source limits cannot tell them apart);
 *   - an Envoy admin answering 2 kB, 1 MB and 4 MB /stats bodies, polled every 200 ms during a
 *     drain: probe latency (the sidecar reads at most 1 MiB).
 *
 * Prints Markdown. Numbers, not assertions: they depend on the machine and its load.
 * Run: npm run build && node dist/bench/hc-flood-bench.js [LABEL] [--write]
 * (--write records what it prints in docs/benchmarks.json)
 */
import * as os from 'node:os';
import { startEnvoyStandin } from '../test/support/envoy-standin';
import { spawnHc, tempStateFile, type SpawnedHc } from '../test/support/hc';
import { waitFor } from '../test/support/wait';
import { attacker, fmt, probes, sleep } from './probe-rig';
import { writeOnExit } from '../test/support/bench-results';

async function main(): Promise<void> {
  writeOnExit('hc-flood', 'node dist/bench/hc-flood-bench.js --write');
  const out: string[] = [];
  const label = process.argv.slice(2).filter((a) => a !== '--write')[0] ?? '';
  out.push(
    `hc flood benchmark ${label} — ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`,
    '',
  );
  out.push('| attack on the health port | probes failed (of 50) | failures | p50 ms | p99 ms | max ms | attacker connects |', '|---|---|---|---|---|---|---|');

  const standin = await startEnvoyStandin({});
  let hc: SpawnedHc | undefined;
  try {
    for (const [name, mode, n, from] of [
      ['none', undefined, 0, ''],
      ['256 slowloris, reconnecting, other address', 'slowloris', 256, '127.0.0.2'],
      ['3000 idle connects, reconnecting, other address', 'idle', 3000, '127.0.0.2'],
      ["256 slowloris, reconnecting, the probes' address", 'slowloris', 256, '127.0.0.1'],
      ["3000 idle connects, reconnecting, the probes' address", 'idle', 3000, '127.0.0.1'],
    ] as const) {
      hc = await spawnHc(['--envoy-admin', standin.adminUrl, '--state-file', tempStateFile(), '--poll-interval', '0.2']);
      await waitFor('OPEN', 10_000, async () => (await hc!.get('/health_check.html')).status === 200);
      const attack = mode ? await attacker([mode, new URL(hc.healthUrl).port, String(n), from]) : undefined;
      if (attack) await sleep(3000); // let the flood reach its steady state (and one header timeout pass)
      const r = await probes(`${hc.healthUrl}/health_check.html`, 50, 10);
      const stats = attack ? await attack.stop() : {};
      out.push(`| ${name} | ${r.failed} | ${r.failures} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.max)} | ${stats['connects'] ?? '-'} |`);
      await hc.stop();
      hc = undefined;
    }
  } finally {
    await hc?.stop();
    await standin.stop();
  }

  out.push('', '| Envoy admin /stats body, polled every 200 ms while DRAINING | probes | unanswered | p50 ms | p99 ms | max ms |', '|---|---|---|---|---|---|');
  for (const bytes of [2_000, 1_000_000, 4_000_000]) {
    const admin = await attacker(['fat-admin', String(bytes)]);
    const fat = await spawnHc([
      '--envoy-admin',
      String(admin.ready['adminUrl']),
      '--state-file',
      tempStateFile(),
      '--poll-interval',
      '0.2',
      '--sequence',
      'drain-first',
      '--drain-timeout',
      '600',
    ]);
    try {
      // A body above the limit is refused at every poll: the hc never leaves its start-up FAULT (it
      // cannot tell whether Envoy was drained), so there is no drain to start; the probes are timed
      // all the same.
      let drain = 'no drain: never OPEN';
      const opened = await waitFor('OPEN', 10_000, async () => (await fat.get('/health_check.html')).status === 200).then(
        () => true,
        () => false,
      );
      if (opened) {
        drain = `POST /drain ${(await fat.post('/drain?witness=none')).status}`;
        await waitFor('DRAINING, counting (or refusing the body)', 10_000, async () => {
          const st = await fat.state();
          return st['inFlight'] === 1 || ((st['envoy'] as Record<string, unknown>)['lastPollError'] ?? null) !== null;
        });
      }
      // Any answer counts (200 while DRAINING, 503 in FAULT): this measures how long a probe waits.
      const r = await probes(`${fat.healthUrl}/health_check.html`, 500, 50, () => true);
      const state = await fat.state();
      const why = state['state'] === 'FAULT' ? `: ${String(state['reason'])}` : '';
      out.push(
        `| ${bytes >= 1e6 ? `${bytes / 1e6} MB` : `${bytes / 1e3} kB`} (${drain}; state ${String(state['state'])}${why}, last poll error: ${String((state['envoy'] as Record<string, unknown>)['lastPollError'] ?? '-')}) | 500 | ${r.failed} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.max)} |`,
      );
    } finally {
      await fat.stop();
      await admin.stop();
    }
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`${err.stack ?? err.message}\n`);
  process.exit(1);
});
