/**
 * A gateway "pod" on loopback: a real Envoy (harness/proxies.ts) as the
 * istio-proxy container, and the real `gracegate hc` process as the sidecar, configured from the
 * plan the way synth would (sequence, drain timeout, LB buffer, soft signal, poll interval).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HcConfigInput } from '../../../src/contract/hc-config';
import type { StateBody } from '../../../src/contract/hc';
import type { PersistedState } from '../../../src/hc/types';
import type { Plan } from '../../../src/plan/plan-gateway';
import type { PodChanges } from '../../../src/pod/pod-changes';
import { REPO_ROOT } from '../../support/run-cli';
import { IstioProxyContainer, ProcessContainer } from './containers';
import { httpCall } from './http';
import { freePort, Proc, waitFor } from './proc';
import { streamLimitsObject } from '../../../src/pod/extra-objects';
import { startProxy, type PodProxy, type ProxyChoice } from './proxies';

/**
 * The stream limits as the pods really get them: the config patches of the EnvoyFilter every
 * delivery path emits from the pod changes (plan.longLived with a bound), applied to the pod's
 * Envoy as istiod merges them; none without a bound.
 */
export function podEnvoyFilterPatches(changes: PodChanges): readonly unknown[] | undefined {
  const filter = streamLimitsObject(changes);
  return filter ? (filter['spec'] as { configPatches: unknown[] }).configPatches : undefined;
}

const GRACEGATE = join(REPO_ROOT, 'bin', 'gracegate.js');

export type PodPorts = { listen: number; admin: number; health: number; control: number; witness: number };

/** What a Pod is made of (its constructor's arguments): name, ports, proxy, hc, config and state files, the drain's duration. */
type PodParts = [name: string, ports: PodPorts, proxy: PodProxy, hc: Proc, configFile: string, stateFile: string, terminationDrainMs: number];

/** Fresh loopback ports for a pod's proxy and hc. */
export async function freePodPorts(): Promise<PodPorts> {
  return { listen: await freePort(), admin: await freePort(), health: await freePort(), control: await freePort(), witness: await freePort() };
}

/**
 * The sidecar config synth writes (PodChanges.hcConfig, the product's own mapping), moved onto this
 * pod's loopback ports and state file; the witness window is shortened to lab time.
 */
export function podHcConfig(changes: Pick<PodChanges, 'hcConfig'>, ports: PodPorts, stateFile: string): HcConfigInput {
  return {
    ...changes.hcConfig,
    envoyAdmin: `http://127.0.0.1:${ports.admin}`,
    envoyAdminTimeoutSeconds: 0.5,
    healthPort: ports.health,
    controlPort: ports.control,
    witnessPort: ports.witness,
    // /metrics on a port of the OS's choosing: the harness reads /state, and pods run side by side.
    metricsPort: 0,
    stateFile,
    terminationWitness: { required: true, windowSeconds: 3 },
  };
}

export class Pod {
  /** The containers as the kubelet stops them. */
  readonly istioProxy: IstioProxyContainer;
  readonly hcContainer: ProcessContainer;

  protected constructor(
    readonly name: string,
    readonly ports: PodPorts,
    readonly proxy: PodProxy,
    readonly hc: Proc,
    readonly configFile: string,
    readonly stateFile: string,
    terminationDrainMs: number,
  ) {
    this.istioProxy = new IstioProxyContainer(proxy, this.adminUrl, terminationDrainMs);
    this.hcContainer = new ProcessContainer('hc', hc);
  }

  /** Starts both containers on the given ports (fresh free ports when omitted) and waits until the LB endpoint answers 200. */
  static async start(name: string, dir: string, plan: Plan, changes: PodChanges, proxyChoice: ProxyChoice, ports?: PodPorts): Promise<Pod> {
    const p = ports ?? (await freePodPorts());
    const proxy = await startProxy(proxyChoice, { listen: p.listen, admin: p.admin }, changes, podEnvoyFilterPatches(changes));
    return Pod.withHc(name, dir, plan, changes, p, proxy, {}, (...parts) => new Pod(...parts));
  }

  /**
   * The hc container beside a started proxy: writes its config (synth's, on this pod's ports;
   * `hc.tweak` changes it), starts `gracegate hc` (or, with `hc.none`, a process that only waits,
   * and no wait for the LB endpoint), and waits until the LB endpoint answers 200. A pod that does
   * not come up is killed, proxy included.
   */
  protected static async withHc<T extends Pod>(
    name: string,
    dir: string,
    plan: Plan,
    changes: PodChanges,
    p: PodPorts,
    proxy: PodProxy,
    hc: { tweak?: (config: HcConfigInput) => void; none?: boolean },
    make: (...parts: PodParts) => T,
  ): Promise<T> {
    const configFile = join(dir, `${name}-hc.json`);
    const stateFile = join(dir, `${name}-${Date.now()}-state.json`);
    const config = podHcConfig(changes, p, stateFile);
    hc.tweak?.(config);
    writeFileSync(configFile, JSON.stringify(config, null, 2));
    const proc = hc.none ? new Proc(`${name}/no-hc`, 'sleep', ['3600']) : new Proc(`${name}/hc`, process.execPath, [GRACEGATE, 'hc', '--config', configFile]);
    const pod = make(name, p, proxy, proc, configFile, stateFile, plan.timings.terminationDrainDurationSeconds * 1000);
    if (hc.none) return pod;
    try {
      // The kubelet's readiness probe, from loopback (a kubelet source): the sidecar's start hold
      // counts from it (docs/hc.md, "The start hold"); then the LB endpoint's first 200.
      await waitFor(`${name}: LB endpoint 200`, 10_000, async () => {
        if (!proc.running) throw new Error(proc.tail());
        await httpCall('GET', `${pod.healthUrl}/health`, 500);
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

  /** The witness port: istio-proxy's preStop GET /wait-closed. */
  get witnessUrl(): string {
    return `http://127.0.0.1:${this.ports.witness}`;
  }

  get adminUrl(): string {
    return this.proxy.adminUrl;
  }

  /** Requests the pod is serving now (harness/proxies.ts says how each proxy counts them). */
  activeRequests(): Promise<number> {
    return this.proxy.activeRequests();
  }

  /** The sidecar's GET /state. */
  async state(): Promise<StateBody> {
    return JSON.parse((await httpCall('GET', `${this.controlUrl}/state`, 1000)).body) as StateBody;
  }

  /**
   * The sidecar's state file, as it wrote it last (on every transition): readable after the
   * container has exited, when /state no longer answers. Null when there is none.
   */
  persistedState(): PersistedState | null {
    try {
      return JSON.parse(readFileSync(this.stateFile, 'utf8')) as PersistedState;
    } catch {
      return null;
    }
  }

  async kill(): Promise<void> {
    await Promise.all([this.proxy.stop(1000), this.hc.stop(1000)]);
  }
}
