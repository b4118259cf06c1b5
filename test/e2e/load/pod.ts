/**
 * A gateway pod for the load scenario: the harness's pod (harness/pod.ts: a real Envoy with the
 * Istio-like bootstrap as istio-proxy, the real `gracegate hc` configured as synth would), but its
 * Envoy routes to a compiled upstream app (app.ts) instead of the Node one, which would be the
 * bottleneck. It has every member of harness/pod.ts's Pod, so harness/terminations.ts deletes it
 * the same way (the kubelet model, pilot-agent on SIGTERM).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StateBody } from '../../../src/contract/hc';
import type { PersistedState } from '../../../src/hc/types';
import type { Plan } from '../../../src/plan/plan-gateway';
import type { PodChanges } from '../../../src/pod/pod-changes';
import { REPO_ROOT } from '../../support/run-cli';
import { startEnvoy, type RealEnvoy } from '../../support/real-envoy';
import { IstioProxyContainer, ProcessContainer } from '../harness/containers';
import { httpCall } from '../harness/http';
import { podHcConfig, type PodPorts } from '../harness/pod';
import { freePort, Proc, waitFor } from '../harness/proc';
import { istioProxyConfig, type PodProxy } from '../harness/proxies';

const GRACEGATE = join(REPO_ROOT, 'bin', 'gracegate.js');
/** Clock ticks per second of /proc/<pid>/stat's times. */
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
/** Istio's HCM prefix for the gateway listener (test/support/istio-like-bootstrap.ts). */
const RQ_ACTIVE = '^http\\.outbound_0\\.0\\.0\\.0_8080\\.downstream_rq_active$';

export type LoadPodOptions = {
  /** The hc's pollIntervalSeconds instead of the plan's; `null`: no hc at all (the CPU baseline). */
  hcPollSeconds?: number | null;
  /** The HCM's drain_timeout (HTTP/2: the time between the first GOAWAY and the last). @default Envoy's 5 s */
  hcmDrainTimeoutMs?: number;
};

function proxyOf(envoy: RealEnvoy, upstreamPort: number): PodProxy {
  let exitedAtMs: number | null = null;
  void envoy.exited.then(() => {
    exitedAtMs = Date.now();
  });
  return {
    label: `Envoy ${envoy.version}`,
    adminUrl: envoy.adminUrl,
    listenPort: envoy.trafficPort,
    upstreamPort,
    tcpPort: 0,
    signal(s) {
      if (!envoy.alive()) return;
      try {
        process.kill(envoy.pid, s);
      } catch {
        // already gone
      }
    },
    exited: envoy.exited,
    get exitedAtMs() {
      return exitedAtMs;
    },
    get running() {
      return envoy.alive();
    },
    // Requests the gateway listener is serving now (Envoy's own count: the app is compiled and keeps none).
    activeRequests: async () => [...(await envoy.stats(RQ_ACTIVE)).values()].reduce((a, b) => a + b, 0),
    async stop(graceMs = 1000) {
      if (envoy.alive()) {
        process.kill(envoy.pid, 'SIGTERM');
        const timer = setTimeout(() => envoy.alive() && process.kill(envoy.pid, 'SIGKILL'), graceMs);
        await envoy.exited;
        clearTimeout(timer);
      }
      await envoy.stop();
    },
    tail: () => envoy.logs().split('\n').slice(-30).join('\n'),
  };
}

export class LoadPod {
  readonly istioProxy: IstioProxyContainer;
  readonly hcContainer: ProcessContainer;

  private constructor(
    readonly name: string,
    readonly ports: PodPorts,
    readonly proxy: PodProxy,
    readonly envoy: RealEnvoy,
    readonly hc: Proc,
    readonly configFile: string,
    readonly stateFile: string,
    terminationDrainMs: number,
  ) {
    this.istioProxy = new IstioProxyContainer(proxy, proxy.adminUrl, terminationDrainMs);
    this.hcContainer = new ProcessContainer('hc', hc);
  }

  static async start(
    name: string,
    dir: string,
    plan: Plan,
    changes: PodChanges,
    version: string,
    upstreamPort: number,
    options: LoadPodOptions = {},
    ports?: PodPorts,
  ): Promise<LoadPod> {
    const p = ports ?? { listen: await freePort(), admin: await freePort(), health: await freePort(), control: await freePort(), witness: await freePort() };
    const config = istioProxyConfig(changes);
    const envoy = await startEnvoy({
      version,
      upstreamPort,
      drainTimeS: config.drainDurationSeconds,
      statsInclusionSuffixes: config.statsInclusionSuffixes,
      ports: { admin: p.admin, traffic: p.listen },
      ...(options.hcmDrainTimeoutMs !== undefined ? { hcmDrainTimeoutMs: options.hcmDrainTimeoutMs } : {}),
    });
    const proxy = proxyOf(envoy, upstreamPort);
    const configFile = join(dir, `${name}-hc.json`);
    const stateFile = join(dir, `${name}-${Date.now()}-state.json`);
    const hcConfig = podHcConfig(changes, p, stateFile);
    if (typeof options.hcPollSeconds === 'number') hcConfig.pollIntervalSeconds = options.hcPollSeconds;
    writeFileSync(configFile, JSON.stringify(hcConfig, null, 2));
    // Without an hc (the CPU baseline) the container is a process that only waits.
    const hc =
      options.hcPollSeconds === null
        ? new Proc(`${name}/no-hc`, 'sleep', ['3600'])
        : new Proc(`${name}/hc`, process.execPath, [GRACEGATE, 'hc', '--config', configFile]);
    const pod = new LoadPod(name, p, proxy, envoy, hc, configFile, stateFile, plan.timings.terminationDrainDurationSeconds * 1000);
    if (options.hcPollSeconds === null) return pod;
    try {
      await waitFor(`${name}: LB endpoint 200`, 10_000, async () => {
        if (!hc.running) throw new Error(hc.tail());
        return (await httpCall('GET', `${pod.healthUrl}/health_check.html`, 500)).status === 200 ? true : undefined;
      });
    } catch (err) {
      await pod.kill();
      throw err;
    }
    return pod;
  }

  get healthUrl(): string {
    return `http://127.0.0.1:${this.ports.health}`;
  }
  get controlUrl(): string {
    return `http://127.0.0.1:${this.ports.control}`;
  }
  get witnessUrl(): string {
    return `http://127.0.0.1:${this.ports.witness}`;
  }
  get adminUrl(): string {
    return this.proxy.adminUrl;
  }
  activeRequests(): Promise<number> {
    return this.proxy.activeRequests();
  }
  async state(): Promise<StateBody> {
    return JSON.parse((await httpCall('GET', `${this.controlUrl}/state`, 1000)).body) as StateBody;
  }
  persistedState(): PersistedState | null {
    try {
      return JSON.parse(readFileSync(this.stateFile, 'utf8')) as PersistedState;
    } catch {
      return null;
    }
  }
  /** Envoy's CPU time so far (user + system, ms), from /proc/<pid>/stat. */
  cpuMs(): number {
    const stat = readFileSync(`/proc/${this.envoy.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of proc(5) (utime, stime), in clock ticks; after the command's ')' they are the 12th and 13th.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  }
  async kill(): Promise<void> {
    await Promise.all([this.proxy.stop(1000), this.hc.stop(1000)]);
  }
}
