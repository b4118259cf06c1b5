/** Helpers for the e2e assertions: say what a run measured when one fails. */
import type { ScenarioRun } from './scenario';

/** One paragraph with everything a failing assertion needs: result, events, termination log. */
export function describeRun(run: ScenarioRun): string {
  const r = run.result;
  return [
    `${r.scenario} ${r.sequence} behind ${r.lbSetting}: ${r.requests} requests, failures ${JSON.stringify(r.failures)}, HAProxy ${JSON.stringify(r.haproxy)}, chunks ${JSON.stringify(r.chunks)}`,
    ...r.events.map((e) => `  [${e.id}] ${e.name}: ${e.atMs === null ? '-' : `${e.atMs} ms`} (${e.source}${e.note ? `; ${e.note}` : ''})`),
    ...run.terminations.flatMap((t) => t.detail.map((d) => `  ${d}`)),
    ...run.records.filter((x) => x.outcome !== 'ok').slice(0, 10).map((x) => `  failed: ${JSON.stringify(x.spec)} ${x.outcome} at ${x.startMs - (run.terminations[0]?.startMs ?? 0)}..${x.endMs - (run.terminations[0]?.startMs ?? 0)} ms`),
  ].join('\n');
}
