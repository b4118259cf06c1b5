/**
 * `node dist/test/proof/cluster/start-half-main.js [KEY...]`: runs start-half.ts's sessions (all, or
 * those named) on the cluster that is up, prints each new pod's timeline and each failure's half
 * and cause as they come, and writes every run to .cache/cluster/start-half/<session>.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeArrivals, describeFailures } from './arrivals';
import { refreshSidecarImage } from './cluster';
import { CLUSTER_DIR } from './layout';
import { requireCluster } from './require-cluster';
import { runStartHalf, START_HALF_SESSIONS, type StartHalfRun } from './start-half';

async function main(keys: string[]): Promise<void> {
  requireCluster();
  await refreshSidecarImage();
  const dir = join(CLUSTER_DIR, 'start-half');
  mkdirSync(dir, { recursive: true });
  for (const [i, s] of START_HALF_SESSIONS.entries()) {
    if (keys.length > 0 && !keys.includes(s.key)) continue;
    const runs: StartHalfRun[] = [];
    await runStartHalf(s, i, (r) => {
      runs.push(r);
      process.stdout.write(
        `${s.key} ${r.action} #${runs.length} (${r.lbSetting}): ${r.requests} requests, ${r.failures.length} failed, settled ${r.settledMs} ms\n` +
          `${describeArrivals(r.arrivals)}\n${r.failures.length ? `${describeFailures(r.failures)}\n` : ''}` +
          `${r.terminationProblems.length ? `  termination half: ${r.terminationProblems.join('; ')}\n` : ''}`,
      );
      writeFileSync(join(dir, `${s.key}.json`), `${JSON.stringify(runs, null, 2)}\n`);
    });
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`start-half: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
