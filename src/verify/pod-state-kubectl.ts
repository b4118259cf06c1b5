/**
 * `gracegate verify --pod-state`, the I/O half: lists the gateway's pods with `kubectl get pods`,
 * then reads each pod's `/state` with `kubectl exec POD -c gracegate-hc -- gracegate state` while
 * the load runs, keeping the last answer of each (a deleted pod stops answering: its last stays).
 * Every kubectl call is bounded in time and output; a poll failing is counted, never fatal.
 */
import { execFile } from 'node:child_process';
import { GracegateError } from '../core/errors';
import { STATE_BODY_MAX_BYTES, STATE_FACTS, type StateFacts } from '../contract/hc';
import { HC_CONFIG_PATH, HC_CONTAINER_NAME } from '../pod/names';
import { parseStateAnswer, type PodStatePolling, type PodStateSample } from './pod-state';

/** Each pod's /state once a second: the six events are seconds apart; kubectl exec costs an API call per pod. */
export const POD_STATE_INTERVAL_MS = 1000;
/** While a pod's sequence is under way: its last events come just before it exits. */
export const SEQUENCE_INTERVAL_MS = 250;
/**
 * In a sequence's last phase, one call right after the other: its last events (drain-first's
 * readiness [2] at CLOSED) come moments before the pod exits, and a call itself takes a few
 * hundred ms. Only the pods in that phase are read this often.
 */
export const ENDING_INTERVAL_MS = 0;
/** The wait between two reads of a pod, by how closely its state is watched (STATE_FACTS). */
const INTERVAL_MS: { readonly [W in StateFacts['watch']]: number } = {
  resting: POD_STATE_INTERVAL_MS,
  running: SEQUENCE_INTERVAL_MS,
  ending: ENDING_INTERVAL_MS,
};
/** One kubectl call's bound (an exec that hangs is killed and counted as a failure). */
export const KUBECTL_TIMEOUT_MS = 10_000;
/** `get pods`' output bound: one name per line. */
const LIST_MAX_BYTES = 256 * 1024;
/** More pods than this is not a staging gateway verify should exec into every second. */
export const MAX_PODS = 32;

/** What the sidecar container runs: the real CLI, reading its port from the mounted config. */
export const HC_STATE_COMMAND = ['gracegate', 'state', '--config', HC_CONFIG_PATH] as const;

export type PodStateTarget = { kubectl: string; namespace: string; selector: string };

function kubectl(bin: string, args: string[], maxBuffer: number, signal?: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      bin,
      args,
      { timeout: KUBECTL_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer, encoding: 'utf8', ...(signal ? { signal } : {}) },
      (err, stdout, stderr) => {
        if (err === null) return resolve(stdout);
        const e = err as NodeJS.ErrnoException & { killed?: boolean };
        const why =
          e.code === 'ENOENT'
            ? `${bin} not found`
            : e.killed
              ? `no answer within ${KUBECTL_TIMEOUT_MS / 1000} s`
              : stderr.trim().split('\n').slice(-3).join(' | ') || e.message;
        reject(new Error(why));
      },
    );
  });
}

/** The gateway's pods now; GracegateError (exit 2) with kubectl's message when they cannot be listed. */
export async function listPods(t: PodStateTarget): Promise<string[]> {
  const where = `--pod-state: kubectl get pods -n ${t.namespace} -l ${t.selector}`;
  let out: string;
  try {
    out = await kubectl(
      t.kubectl,
      ['get', 'pods', '-n', t.namespace, '-l', t.selector, '-o', 'jsonpath={range .items[*]}{.metadata.name}{"\\n"}{end}'],
      LIST_MAX_BYTES,
    );
  } catch (err) {
    throw new GracegateError(
      `${where} failed: ${(err as Error).message} (verify needs to list pods in ${t.namespace}: RBAC pods list; --kubectl names the binary)`,
    );
  }
  const pods = out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  if (pods.length === 0) throw new GracegateError(`${where} found no pod: is --spec the gateway in this cluster (kubectl's current context)?`);
  if (pods.length > MAX_PODS)
    throw new GracegateError(`${where} found ${pods.length} pods; --pod-state reads at most ${MAX_PODS} (one kubectl exec per pod per second)`);
  return pods;
}

/**
 * Polls each pod's /state: every POD_STATE_INTERVAL_MS, and every SEQUENCE_INTERVAL_MS while its
 * sequence is under way (the last events come just before the pod exits). Each pod's next call
 * starts only when its previous one has ended, so polls never pile up behind a slow API server.
 */
export class PodStatePoller {
  /** The last answer of each pod. */
  readonly last = new Map<string, PodStateSample>();
  private polls = 0;
  private failures = 0;
  private lastError: string | null = null;
  private stopped = false;
  /** Pods the API server no longer has (kubectl's NotFound): they will not answer again, so they are not asked again. */
  private readonly gone = new Set<string>();
  private readonly wakers = new Set<() => void>();
  private loops: Promise<void[]> | null = null;

  /** `signal` (Ctrl-C) ends the calls in flight at once; a normal stop lets them finish. */
  constructor(
    private readonly target: PodStateTarget,
    readonly pods: readonly string[],
    private readonly signal?: AbortSignal,
  ) {}

  start(): void {
    this.loops ??= Promise.all(this.pods.map((pod) => this.run(pod)));
  }

  /** Stops polling; resolves when the calls in flight have ended (bounded by KUBECTL_TIMEOUT_MS). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of this.wakers) wake();
    await this.loops;
  }

  polling(): PodStatePolling {
    return {
      namespace: this.target.namespace,
      selector: this.target.selector,
      intervalMs: POD_STATE_INTERVAL_MS,
      sequenceIntervalMs: SEQUENCE_INTERVAL_MS,
      polls: this.polls,
      failures: this.failures,
      lastError: this.lastError,
    };
  }

  private async run(pod: string): Promise<void> {
    while (!this.stopped) {
      const started = Date.now();
      await this.poll(pod);
      if (this.stopped || this.gone.has(pod)) break;
      const state = this.last.get(pod)?.answer.state;
      const interval = state === undefined ? POD_STATE_INTERVAL_MS : INTERVAL_MS[STATE_FACTS[state].watch];
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          this.wakers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.max(0, started + interval - Date.now()));
        this.wakers.add(wake);
      });
    }
  }

  private async poll(pod: string): Promise<void> {
    this.polls++;
    try {
      const out = await kubectl(
        this.target.kubectl,
        ['exec', '-n', this.target.namespace, pod, '-c', HC_CONTAINER_NAME, '--', ...HC_STATE_COMMAND],
        STATE_BODY_MAX_BYTES,
        this.signal,
      );
      this.last.set(pod, { answer: parseStateAnswer(out), answeredAt: Date.now() });
    } catch (err) {
      if (this.signal?.aborted) {
        this.polls--;
        return;
      }
      this.failures++;
      this.lastError = `${pod}: ${(err as Error).message}`;
      // A deleted pod's last answer may say DRAINING or CLOSING, which would have it asked every
      // 250 ms or back to back until the run ends: calls that cost the pods still running their
      // sequence their turn on a loaded machine (79 of 88 calls went to a gone pod on the test cluster).
      if (/\(NotFound\)/.test((err as Error).message)) this.gone.add(pod);
    }
  }
}
