/**
 * One pod of the app, run the way a kubelet runs it, from the pod template of a Deployment (JSON):
 * the app container's env, readiness probe, preStop and the pod's terminationGracePeriodSeconds.
 * Termination follows the kubelet (docs/facts.md §6): the grace period starts at the deletion and
 * counts the preStop; SIGTERM when the preStop ends (or fails); SIGKILL when the rest of the grace
 * period, at least 2 s, has passed. An exec preStop really runs its command; in a "distroless"
 * pod the command is not there, so the hook fails and SIGTERM comes at once.
 *
 * Every duration of the template is multiplied by `scale` (a compressed clock for quick runs);
 * times reported back are divided by it again, so they read in the cluster's seconds.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { K8sObject } from '../../../src/pod/k8s';
import { httpCall } from './http';
import { freePort, Proc, sleep, waitFor } from './proc';

type Obj = Record<string, any>;

/** The kubelet's floor on the time between SIGTERM and SIGKILL (minimumGracePeriodInSeconds). */
const MINIMUM_GRACE_SECONDS = 2;

export type PodOptions = {
  scale: number;
  /** Env variables holding seconds (the app's shutdown timeout), scaled like every other duration. */
  secondsEnv: readonly string[];
  /** The image has no shell and no sleep: an exec preStop cannot run. */
  distroless: boolean;
};

/** What happened to one pod, in the cluster's seconds after its start (null: did not happen). */
export type PodRecord = {
  name: string;
  startedAtMs: number;
  readyAtMs: number | null;
  deletedAtMs: number | null;
  sigtermAtMs: number | null;
  exitedAtMs: number | null;
  killed: boolean;
  preStop: 'none' | 'sleep' | 'exec';
  preStopFailed: boolean;
};

const APP = join(__dirname, '..', 'e2e-workload', 'app-server.js');

function appContainer(deployment: K8sObject): Obj {
  return (deployment.spec as Obj).template.spec.containers[0];
}

export class WorkloadPod {
  readonly record: PodRecord;
  readonly ready: Promise<void>;
  private exit?: Promise<void>;

  private constructor(
    readonly name: string,
    readonly port: number,
    private readonly proc: Proc,
    private readonly deployment: K8sObject,
    private readonly options: PodOptions,
  ) {
    const preStop = appContainer(deployment).lifecycle?.preStop as Obj | undefined;
    this.record = {
      name,
      startedAtMs: Date.now(),
      readyAtMs: null,
      deletedAtMs: null,
      sigtermAtMs: null,
      exitedAtMs: null,
      killed: false,
      preStop: preStop?.sleep ? 'sleep' : preStop?.exec ? 'exec' : 'none',
      preStopFailed: false,
    };
    void proc.exited.then(({ signal }) => {
      this.record.exitedAtMs = Date.now();
      this.record.killed = signal === 'SIGKILL';
    });
    this.ready = this.probeUntilReady();
    this.ready.catch(() => undefined); // a pod deleted while starting is not an unhandled failure
  }

  /** Starts the app container as the template describes it. */
  static async start(name: string, deployment: K8sObject, options: PodOptions): Promise<WorkloadPod> {
    const port = await freePort();
    const container = appContainer(deployment);
    const env: Record<string, string> = { PORT: String(port), POD_NAME: name };
    for (const e of (container.env ?? []) as Array<{ name: string; value: string }>) {
      env[e.name] = options.secondsEnv.includes(e.name) ? String(Number(e.value) * options.scale) : e.value;
    }
    const proc = new Proc(name, process.execPath, [APP], env);
    await waitFor(`${name} listening`, 10_000, () =>
      proc.output.some((l) => l.text.includes('listening')) ? true : proc.running ? undefined : Promise.reject(new Error(proc.tail())),
    );
    return new WorkloadPod(name, port, proc, deployment, options);
  }

  private seconds(s: number): number {
    return s * 1000 * this.options.scale;
  }

  /** The readiness probe (httpGet on the pod's port): initial delay, then every period until one passes. */
  private async probeUntilReady(): Promise<void> {
    const probe = (appContainer(this.deployment).readinessProbe ?? {}) as Obj;
    await sleep(this.seconds(probe.initialDelaySeconds ?? 0));
    for (;;) {
      if (this.record.deletedAtMs !== null) throw new Error(`${this.name} deleted before it was ready`);
      try {
        const r = await httpCall('GET', `http://127.0.0.1:${this.port}${probe.httpGet?.path ?? '/health'}`, 1000);
        if (r.status === 200) {
          this.record.readyAtMs = Date.now();
          return;
        }
      } catch {
        // not listening yet: the next period
      }
      await sleep(this.seconds(probe.periodSeconds ?? 10));
    }
  }

  /** Runs the preStop; resolves when it ended, failed, or the grace period cut it. */
  private async preStop(graceMs: number): Promise<void> {
    const hook = appContainer(this.deployment).lifecycle?.preStop as Obj | undefined;
    let run: Promise<void>;
    if (hook?.sleep) {
      run = sleep(this.seconds(Number(hook.sleep.seconds)));
    } else if (hook?.exec) {
      const [cmd, ...args] = hook.exec.command as string[];
      // `sleep N` on the compressed clock; a distroless image has no command to run.
      const scaled = cmd === 'sleep' ? args.map((a) => String(Number(a) * this.options.scale)) : args;
      run = new Promise<void>((resolve) => {
        const child = spawn(cmd!, scaled, { stdio: 'ignore', env: this.options.distroless ? { PATH: '/nonexistent' } : process.env });
        child.on('error', () => {
          this.record.preStopFailed = true;
          resolve();
        });
        child.on('exit', (code) => {
          if (code !== 0) this.record.preStopFailed = true;
          resolve();
        });
      });
    } else {
      return;
    }
    // The kubelet stops waiting for the hook at the grace period's end.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      run,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      }),
    ]);
    clearTimeout(timer);
  }

  /** Deletes the pod: preStop, SIGTERM, SIGKILL at the grace period. Resolves when the app has exited. */
  terminate(): Promise<void> {
    this.exit ??= (async () => {
      this.record.deletedAtMs = Date.now();
      const graceSeconds = Number((this.deployment.spec as Obj).template.spec.terminationGracePeriodSeconds ?? 30);
      const graceMs = this.seconds(graceSeconds);
      await this.preStop(graceMs);
      const left = Math.max(graceMs - (Date.now() - this.record.deletedAtMs), this.seconds(MINIMUM_GRACE_SECONDS));
      this.record.sigtermAtMs = Date.now();
      this.proc.signal('SIGTERM');
      const timer = setTimeout(() => this.proc.signal('SIGKILL'), left);
      await this.proc.exited;
      clearTimeout(timer);
    })();
    return this.exit;
  }

  /** Stops a pod outside the experiment (the pods that stay after the rollout), without any record. */
  async stop(): Promise<void> {
    await this.proc.stop(500);
  }
}
