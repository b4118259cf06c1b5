/**
 * `gracegate verify --spec SPEC --pod-state` run as a user runs it against the cluster: from the
 * outside namespace, through the gateway's HAProxy, the real kubectl exec'ing `gracegate state`
 * in the real sidecar image, during a `kubectl rollout restart`. Its report's six events are then
 * held to the sidecar's own state file (read from the node's disk) and the kubelet's records.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { TERMINATION_EVENTS } from '../../../../src/contract/hc';
import type { PersistedState } from '../../../../src/hc/types';
import type { VerifyReport } from '../../../../src/verify/report';
import { REPO_ROOT } from '../../../support/repo';
import { CLUSTER_APP_PATHS } from '../paths';
import { clusterEnv } from '../kubectl';
import { OUTSIDE, TOOLS_PATH } from '../layout';
import { inNetns } from '../sh';
import type { ContainerRecord } from '../witnesses';

const GRACEGATE = join(REPO_ROOT, 'bin/gracegate.js');

/** Runs verify (async: the witnesses poll beside it); resolves with its JSON report and exit status. */
export function runVerify(o: { url: string; specFile: string; namespace: string; deployment: string; oldPods: string[]; durationS: number }): Promise<{
  report: VerifyReport;
  status: number | null;
  stderr: string;
}> {
  const kubectlBin = join(TOOLS_PATH[1]!, 'kubectl');
  const args = [
    GRACEGATE,
    'verify',
    '--url',
    `${o.url}/`,
    '--slow-path',
    CLUSTER_APP_PATHS.slow(1234).replace('1234', '{ms}'),
    '--stream-path',
    CLUSTER_APP_PATHS.stream(1111, 2222).replace('1111', '{chunks}').replace('2222', '{intervalMs}'),
    '--scenario',
    'rolling',
    '--terminate',
    `${kubectlBin} -n ${o.namespace} rollout restart deployment/${o.deployment}`,
    '--observe',
    // rollout status returns once the last old pod is terminating; the run goes on until it is gone.
    `${kubectlBin} -n ${o.namespace} rollout status deployment/${o.deployment} --timeout=180s && ${kubectlBin} -n ${o.namespace} wait --for=delete ${o.oldPods.map((p) => `pod/${p}`).join(' ')} --timeout=120s`,
    '--terminate-at',
    '3s',
    '--tail',
    '3s',
    '--duration',
    `${o.durationS}s`,
    '--rps',
    '20',
    '--connections',
    '6',
    '--spec',
    o.specFile,
    '--pod-state',
    '--kubectl',
    kubectlBin,
    '--format',
    'json',
  ];
  const [cmd, ...rest] = inNetns(OUTSIDE.netns, process.execPath, args);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd!, rest, { env: clusterEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), (o.durationS + 60) * 1000);
    child.on('error', reject);
    child.on('exit', (status) => {
      clearTimeout(timer);
      try {
        resolve({ report: JSON.parse(stdout) as VerifyReport, status, stderr });
      } catch {
        reject(new Error(`verify exited ${status} without a JSON report: ${stderr.slice(-2000)}${stdout.slice(-2000)}`));
      }
    });
  });
}

export type EventCheck = { pod: string; event: string; verifyMs: number | null; stateMs: number | null; ok: boolean; why: string };

/**
 * Each observed event of verify's timeline against the pod's state file, on verify's clock:
 * equal within `toleranceMs`; an event verify lacks must have happened after its last answer
 * (the pod stopped answering first), and one verify shows must be in the state file.
 */
export function eventsAgainstState(
  pod: NonNullable<VerifyReport['podStates']>[number],
  state: PersistedState | undefined,
  t0: number,
  toleranceMs: number,
): EventCheck[] {
  return TERMINATION_EVENTS.filter((e) => !e.estimated).map((e) => {
    const shown = pod.events.find((x) => x.id === e.id)?.atMs ?? null;
    const at = state?.events[e.key]?.at;
    const stateMs = at === undefined || at === null ? null : at - t0;
    const base = { pod: pod.pod, event: `[${e.id}] ${e.name}`, verifyMs: shown, stateMs };
    if (shown === null && stateMs === null) return { ...base, ok: true, why: 'in neither' };
    if (shown === null)
      return pod.answeredAtMs !== null && stateMs !== null && stateMs > pod.answeredAtMs - toleranceMs
        ? { ...base, ok: true, why: `after verify's last answer (${pod.answeredAtMs} ms)` }
        : { ...base, ok: false, why: `missing from verify's timeline though its last answer came at ${pod.answeredAtMs} ms` };
    if (stateMs === null) return { ...base, ok: false, why: 'on verify’s timeline but not in the state file' };
    return Math.abs(shown - stateMs) <= toleranceMs ? { ...base, ok: true, why: 'equal' } : { ...base, ok: false, why: `${shown - stateMs} ms apart` };
  });
}

/** The state file stamps whole ms (ISO); a klog time of the same instant may lie up to 1 ms later. */
const STAMP_MS = 1;

/**
 * The kubelet's records against verify's timeline, as orders the machine's pace cannot break.
 * The sequence starts when both preStop hooks have reached the sidecar: istio-proxy's hold
 * (/wait-closed) witnesses the termination and the hc container's own hook (/hc-stopping) asks
 * for the drain, so [1] lies at or after the later of the two hook starts the kubelet logged, and
 * before either hook returned (each is answered at CLOSED). No width from the logged start holds:
 * after logging it, the kubelet asks the runtime for the pod's status to find its IP before each
 * httpGet hook's request (runHTTPHandler's GetPodStatus, pkg/kubelet/lifecycle/handlers.go), a CRI
 * round trip that a loaded node stretches; CI of 80975a0 saw [1] 1084 ms after istio-proxy's logged
 * start. istio-proxy's hold returned only after in-flight reached zero ([4]).
 * Both sides stamp with this machine's clock; the state file's ISO times are whole ms
 * (`STAMP_MS`), klog's are microseconds.
 */
export function eventsAgainstKubelet(
  pod: NonNullable<VerifyReport['podStates']>[number],
  containers: ContainerRecord[],
  t0: number,
  toleranceMs: number,
): EventCheck[] {
  const proxy = containers.find((c) => c.name === 'istio-proxy');
  const hooked = containers.filter((c) => c.preStopStartMs !== null);
  const first = pod.events.find((x) => x.id === 1)?.atMs ?? null;
  const zero = pod.events.find((x) => x.id === 4)?.atMs ?? null;
  const lastStart = hooked.length === 0 ? null : Math.max(...hooked.map((c) => c.preStopStartMs!)) - t0;
  const ends = hooked.map((c) => c.preStopEndMs);
  const firstEnd = ends.length === 0 || ends.some((e) => e === null) ? null : Math.min(...(ends as number[])) - t0;
  const holdEnd = proxy?.preStopEndMs == null ? null : proxy.preStopEndMs - t0;
  const names = hooked.map((c) => c.name).join(' and ');
  const starts = hooked.map((c) => `${c.name} ${c.preStopStartMs! - t0} ms`).join(', ');
  return [
    {
      pod: pod.pod,
      event: `[1] vs the kubelet running the preStop hooks of ${names || 'no container'}`,
      verifyMs: first,
      stateMs: lastStart,
      ok: hooked.length === 2 && first !== null && lastStart !== null && firstEnd !== null && first >= lastStart - STAMP_MS && first <= firstEnd + STAMP_MS,
      why: `the sequence starts once both hooks have arrived: after the later hook start (${starts}), before either hook returned (${firstEnd} ms)`,
    },
    {
      pod: pod.pod,
      event: '[4] vs the kubelet seeing istio-proxy’s preStop return',
      verifyMs: zero,
      stateMs: holdEnd,
      ...(zero === null
        ? {
            ok: pod.answeredAtMs !== null && holdEnd !== null && holdEnd >= pod.answeredAtMs - toleranceMs,
            why: `not in verify's last answer (${pod.answeredAtMs} ms): the hold returned after it`,
          }
        : { ok: holdEnd !== null && zero <= holdEnd + STAMP_MS, why: 'the hold returns at CLOSED, after in-flight zero' }),
    },
  ];
}
