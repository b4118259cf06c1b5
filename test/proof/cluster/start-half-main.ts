/**
 * `node dist/test/proof/cluster/start-half-main.js [--write] [KEY...]`: runs start-half.ts's sessions
 * (all, or those named) on the cluster that is up, prints each new pod's timeline and each failure's
 * half and cause as they come, and keeps every run in .cache/cluster/start-half/<session>.json.
 * `--write` also puts them in docs/cluster/results.json (its `startHalf`) and renders docs/cluster.md
 * and the README from it.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { planGateway } from '../../../src/plan/plan-gateway';
import { resolveGatewaySpec } from '../../../src/schema/parse-spec';
import { START_PROPAGATION_SECONDS } from '../../../src/schema/start-path';
import { describeArrivals, describeFailures } from './arrivals';
import { refreshSidecarImage } from './cluster';
import { clusterSpec } from './gateway';
import { CLUSTER_DIR } from './layout';
import type { ClusterResults } from './render';
import { RESULTS_FILE, writeClusterResults } from './results-file';
import { requireCluster } from './require-cluster';
import { NO_START_HOLD, runStartHalf, START_HALF_SESSIONS, startHalfOptions, type StartHalfResults, type StartHalfRun } from './start-half';

/**
 * The start hold of the held sessions' plan (kube-proxy's minSyncPeriod at its default, as the
 * cluster runs it, plus the propagation): the plan of the first held session's spec.
 */
function plannedHoldSeconds(): number {
  const i = START_HALF_SESSIONS.findIndex((s) => s.hcConfigPatch !== NO_START_HOLD && s.healthPortOn !== 'gateway');
  if (i < 0) throw new Error('start-half: no session holds the first 200');
  return planGateway(resolveGatewaySpec(clusterSpec(startHalfOptions(START_HALF_SESSIONS[i]!, i)))).timings.startHoldSeconds;
}

async function main(args: string[]): Promise<void> {
  const write = args.includes('--write');
  const keys = args.filter((a) => a !== '--write');
  requireCluster();
  await refreshSidecarImage();
  const dir = join(CLUSTER_DIR, 'start-half');
  mkdirSync(dir, { recursive: true });
  const sessions: StartHalfResults['sessions'] = [];
  for (const [i, s] of START_HALF_SESSIONS.entries()) {
    if (keys.length > 0 && !keys.includes(s.key)) continue;
    const runs: StartHalfRun[] = [];
    await runStartHalf(s, i, (r) => {
      runs.push(r);
      process.stdout.write(
        `${s.key} ${r.action} #${runs.length} (${r.lbSetting}): ${r.requests} requests, ${r.failures.length} failed, settled ${r.settledMs} ms\n` +
          `${r.leaving.map((l) => `  leaving ${l.pod} on ${l.node}: ${l.fromMs}..${l.toMs} ms`).join('\n')}\n` +
          `${describeArrivals(r.arrivals)}\n${r.failures.length ? `${describeFailures(r.failures)}\n` : ''}` +
          `${r.terminationProblems.length ? `  termination half: ${r.terminationProblems.join('; ')}\n` : ''}` +
          `${r.rolloutTime ? `  rollout ${r.rolloutTime.durationMs} ms, lower bound ${r.rolloutTime.lowerBoundMs} ms (${JSON.stringify(r.rolloutTime.terms)}): ${r.rolloutTime.ratio}x\n` : ''}`,
      );
      writeFileSync(join(dir, `${s.key}.json`), `${JSON.stringify(runs, null, 2)}\n`);
    });
    const held = s.hcConfigPatch !== NO_START_HOLD;
    const onGateway = s.healthPortOn === 'gateway';
    sessions.push({
      key: s.key,
      hold: onGateway ? "the health port on the gateway's own Service" : held ? "the plan's start hold" : 'as before issue 50 (no start hold)',
      held,
      probe: onGateway ? 'gateway-service' : 'health-service',
      lbSetting: s.setting.label,
      runs: runs.map(({ action, requests, failures, arrivals, settledMs, rolloutTime }) => ({ action, requests, failures, arrivals, settledMs, rolloutTime })),
    });
  }
  if (!write) return;
  const results = JSON.parse(readFileSync(RESULTS_FILE, 'utf8')) as ClusterResults;
  // Sessions named on the command line replace their own results; the others' stay.
  const kept = keys.length > 0 ? (results.startHalf?.sessions ?? []).filter((s) => !keys.includes(s.key)) : [];
  const order = START_HALF_SESSIONS.map((s) => s.key);
  results.startHalf = {
    measuredAt: new Date().toISOString(),
    holdSeconds: plannedHoldSeconds(),
    propagationSeconds: START_PROPAGATION_SECONDS,
    sessions: [...kept, ...sessions].sort((a, b) => order.indexOf(a.key) - order.indexOf(b.key)),
  };
  writeClusterResults(results);
  process.stdout.write(`start-half: wrote ${RESULTS_FILE} and rendered docs/cluster.md and the README\n`);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`start-half: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
