/**
 * How a pod leaves. `gracegate`: what the kubelet does with the plan's pod: run both preStop hooks
 * at once (the hc container's `gracegate drain`, the istio-proxy container's GET /wait-closed),
 * then SIGTERM each container, with the proxy killed after Istio's terminationDrainDuration and
 * everything killed at the grace period. The two baselines are harness scripts acting directly on
 * the stand-in's admin API and the sidecar's manual endpoints, labelled as such in every report.
 */
import { join } from 'node:path';
import type { Plan } from '../../../src/plan/plan-gateway';
import { REPO_ROOT } from '../../support/run-cli';
import { httpCall } from './http';
import type { HcState, Pod } from './pod';
import { Proc, sleep } from './proc';
import type { Termination } from './result';

export type Mark = { id: 1 | 2 | 3 | 4; atMs: number; source: string; note?: string };

export type TerminationLog = {
  kind: Termination;
  label: string;
  startMs: number;
  /** When the preStop hooks (or the baseline script's steps) ended. */
  endMs: number;
  marks: Mark[];
  hcState?: HcState;
  detail: string[];
};

const GRACEGATE = join(REPO_ROOT, 'bin', 'gracegate.js');

async function post(url: string): Promise<void> {
  const r = await httpCall('POST', url, 2000);
  if (r.status !== 200) throw new Error(`POST ${url}: HTTP ${r.status} ${r.body}`);
}

/** The sidecar's own record of events [1]-[4] (the LB-side [5], [6] come from HAProxy). */
function marksFromState(state: HcState): Mark[] {
  return state.events
    .filter((e) => e.at !== null && !e.estimated && e.id <= 4)
    .map((e) => ({ id: e.id as Mark['id'], atMs: Date.parse(e.at!), source: 'sidecar /state', ...(e.note ? { note: e.note } : {}) }));
}

export async function gracegateTermination(pod: Pod, plan: Plan): Promise<TerminationLog> {
  const startMs = Date.now();
  const detail: string[] = [];
  const graceMs = plan.timings.terminationGracePeriodSeconds * 1000;
  const drain = new Proc(`${pod.name}/preStop drain`, process.execPath, [GRACEGATE, 'drain', '--config', pod.configFile]);
  const waitClosed = httpCall('GET', `${pod.witnessUrl}/wait-closed`, graceMs).then(
    (r) => detail.push(`istio-proxy preStop GET /wait-closed: HTTP ${r.status} after ${Date.now() - startMs} ms`),
    (e: Error) => detail.push(`istio-proxy preStop GET /wait-closed failed: ${e.message}`),
  );
  const drained = drain.exited.then(({ code }) => detail.push(`hc preStop gracegate drain: exit ${code} after ${Date.now() - startMs} ms`));
  let graceTimer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<'grace'>((r) => { graceTimer = setTimeout(() => r('grace'), graceMs); });
  const how = await Promise.race([Promise.all([drained, waitClosed]).then(() => 'hooks' as const), graceOver]);
  clearTimeout(graceTimer);
  if (how === 'grace') detail.push('grace period reached before the preStop hooks ended: SIGKILL');
  const endMs = Date.now();
  let hcState: HcState | undefined;
  try {
    hcState = await pod.state();
  } catch (err) {
    detail.push(`GET /state failed: ${(err as Error).message}`);
  }
  for (const line of drain.output) detail.push(`drain: ${line.text}`);
  await drain.stop(500);
  // preStop over: SIGTERM; pilot-agent lets Envoy drain terminationDrainDuration, then it is gone.
  await Promise.all([pod.proxy.stop(plan.timings.terminationDrainDurationSeconds * 1000), pod.hc.stop(1000)]);
  return { kind: 'gracegate', label: `gracegate ${plan.sequence}`, startMs, endMs, marks: hcState ? marksFromState(hcState) : [], ...(hcState ? { hcState } : {}), detail };
}

/**
 * Naive: no preStop. The LB endpoint fails at once (the seed's "503 at once"), pilot-agent gets
 * SIGTERM and starts Envoy's graceful drain (`listeners: 'stopped'`: followed by a plain
 * drain_listeners, so new connects are refused at once while HAProxy still sends), and Envoy is
 * gone terminationDrainDuration later.
 */
export async function naiveTermination(pod: Pod, plan: Plan, listeners: 'graceful' | 'stopped' = 'graceful'): Promise<TerminationLog> {
  const startMs = Date.now();
  const marks: Mark[] = [];
  await post(`${pod.controlUrl}/close-lb`);
  marks.push({ id: 1, atMs: Date.now(), source: 'harness: POST /close-lb' });
  await post(`${pod.adminUrl}/drain_listeners?graceful`);
  // 'stopped': the plain call right after stops the listeners (the sidecar's own drain does both).
  if (listeners === 'stopped') await post(`${pod.adminUrl}/drain_listeners`);
  const call = listeners === 'graceful' ? 'drain_listeners?graceful' : 'drain_listeners?graceful + drain_listeners';
  marks.push({ id: 3, atMs: Date.now(), source: `harness: ${call}` });
  await sleep(plan.timings.terminationDrainDurationSeconds * 1000);
  await Promise.all([pod.proxy.stop(500), pod.hc.stop(500)]);
  return { kind: listeners === 'graceful' ? 'naive' : 'naive-listeners-stopped', label: `naive (503 at once, ${call}, proxy exits after terminationDrainDuration)`, startMs, endMs: Date.now(), marks, detail: [] };
}

/**
 * The seed's literal order: drain while still accepting (`drain_listeners?graceful&skip_exit`),
 * poll in-flight up to the drain timeout, then 503, wait the LB buffer, then stop the proxy.
 */
export async function seedTermination(pod: Pod, plan: Plan): Promise<TerminationLog> {
  const startMs = Date.now();
  const marks: Mark[] = [];
  const detail: string[] = [];
  await post(`${pod.adminUrl}/drain_listeners?graceful&skip_exit`);
  marks.push({ id: 3, atMs: Date.now(), source: 'harness: drain_listeners?graceful&skip_exit' });
  const deadline = Date.now() + plan.timings.drainTimeoutSeconds * 1000;
  let last = -1;
  while (Date.now() < deadline) {
    last = (await pod.counts()).requests;
    if (last === 0) {
      marks.push({ id: 4, atMs: Date.now(), source: 'harness poll of the proxy' });
      break;
    }
    await sleep(plan.timings.pollIntervalSeconds * 1000);
  }
  if (last !== 0) detail.push(`in-flight never reached 0 (still ${last} after ${plan.timings.drainTimeoutSeconds}s)`);
  await post(`${pod.controlUrl}/close-lb`);
  marks.push({ id: 1, atMs: Date.now(), source: 'harness: POST /close-lb' });
  await sleep(plan.timings.lbBufferSeconds * 1000);
  await Promise.all([pod.proxy.stop(500), pod.hc.stop(500)]);
  return { kind: 'seed', label: 'seed order (keep accepting, poll, then 503)', startMs, endMs: Date.now(), marks, detail };
}
