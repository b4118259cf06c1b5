/**
 * A gateway pod for the load scenario: the harness's pod (harness/pod.ts: a real Envoy with the
 * Istio-like bootstrap as istio-proxy, the real `gracegate hc` configured as synth would), but its
 * Envoy routes to a compiled upstream app (app.ts) instead of the Node one, which would be the
 * bottleneck. It has every member of harness/pod.ts's Pod, so harness/terminations.ts deletes it
 * the same way (the kubelet model, pilot-agent on SIGTERM).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { HcConfigInput } from '../../../src/contract/hc-config';
import type { Plan } from '../../../src/plan/plan-gateway';
import type { PodChanges } from '../../../src/pod/pod-changes';
import { startEnvoy, type RealEnvoy } from '../../support/real-envoy';
import { freePodPorts, Pod, type PodPorts } from '../harness/pod';
import { istioProxyConfig, realEnvoyProxy, type PodProxy } from '../harness/proxies';
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
  return realEnvoyProxy(envoy, {
    upstreamPort,
    tcpPort: 0,
    // Requests the gateway listener is serving now (Envoy's own count: the app is compiled and keeps none).
    activeRequests: async () => [...(await envoy.stats(RQ_ACTIVE)).values()].reduce((a, b) => a + b, 0),
  });
}

/**
 * The harness's Pod (all its members, so harness/terminations.ts deletes it the same way) on the
 * load's Envoy, with that Envoy's CPU time.
 */
export class LoadPod extends Pod {
  private envoy!: RealEnvoy;

  static async startLoad(
    name: string,
    dir: string,
    plan: Plan,
    changes: PodChanges,
    version: string,
    upstreamPort: number,
    options: LoadPodOptions = {},
    ports?: PodPorts,
  ): Promise<LoadPod> {
    const p = ports ?? (await freePodPorts());
    const config = istioProxyConfig(changes);
    const envoy = await startEnvoy({
      version,
      upstreamPort,
      drainTimeS: config.drainDurationSeconds,
      statsInclusionSuffixes: config.statsInclusionSuffixes,
      ports: { admin: p.admin, traffic: p.listen },
      ...(options.hcmDrainTimeoutMs !== undefined ? { hcmDrainTimeoutMs: options.hcmDrainTimeoutMs } : {}),
    });
    const poll = options.hcPollSeconds;
    const hc = {
      // Without an hc (the CPU baseline) the container is a process that only waits.
      none: poll === null,
      tweak: (c: HcConfigInput) => {
        if (typeof poll === 'number') c.pollIntervalSeconds = poll;
      },
    };
    return Pod.withHc(name, dir, plan, changes, p, proxyOf(envoy, upstreamPort), hc, (...parts) => {
      const pod = new LoadPod(...parts);
      pod.envoy = envoy;
      return pod;
    });
  }

  /** Envoy's CPU time so far (user + system, ms), from /proc/<pid>/stat. */
  cpuMs(): number {
    const stat = readFileSync(`/proc/${this.envoy.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of proc(5) (utime, stime), in clock ticks; after the command's ')' they are the 12th and 13th.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  }
}
