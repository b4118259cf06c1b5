/**
 * The istio-proxy container's Envoy for a pod: a real Envoy, one of the pinned versions, with the
 * Istio-gateway-like bootstrap of test/support/istio-like-bootstrap.ts and an upstream app of its
 * own. It is configured from the pod's `proxy.istio.io/config` annotation as gracegate's PodChanges
 * set it, the way pilot-agent applies it: drainDuration as `--drain-time-s`,
 * proxyStatsMatcher.inclusionSuffixes into the stats matcher. Everything else is Istio's default
 * (HCM drain_timeout 5 s, idle_timeout 1 h). The stand-in (test/support/envoy-standin.ts) is under
 * no end-to-end run: it stays for the sidecar's fault tests, which a real Envoy cannot be made to fail.
 */
import type { PodChanges } from '../../../src/pod/pod-changes';
import { startGrpcApp } from '../../support/grpc-app';
import { startTcpEcho } from '../../support/tcp-echo';
import { pinnedEnvoys, startEnvoy, type RealEnvoy } from '../../support/real-envoy';
import { STREAM_END_FLUSH_MS, type StreamEnd } from '../../support/stream-end-log';

export type ProxyChoice = { kind: 'envoy'; version: string };

/** Every pinned Envoy (test/support/envoy-versions.json), in that file's order; throws when one is not installed. */
export function pinnedProxies(): Array<ProxyChoice & { role: 'istio' | 'newest' }> {
  return pinnedEnvoys().map((e) => ({ kind: 'envoy', version: e.version, role: e.role }));
}

/** The Envoy of the Istio release in examples/: the baselines (which test no sidecar) run on it alone. */
export function istioProxy(): ProxyChoice {
  return pinnedProxies().find((p) => p.role === 'istio')!;
}

/** How reports and tests name a proxy: `Envoy 1.36.4`. */
export function proxyLabel(choice: ProxyChoice): string {
  return `Envoy ${choice.version}`;
}

/** The proxy process of a pod, as the harness drives it. */
export interface PodProxy {
  readonly label: string;
  readonly adminUrl: string;
  readonly listenPort: number;
  /** The port of the pod's own upstream app (its feed responses carry it: which pod served a stream). */
  readonly upstreamPort: number;
  /** The tcp_proxy listener (a Gateway server with protocol TCP) to the pod's TCP echo server. */
  readonly tcpPort: number;
  signal(signal: NodeJS.Signals): void;
  readonly exited: Promise<unknown>;
  /** When the process exited (epoch ms), null while it runs. */
  readonly exitedAtMs: number | null;
  /**
   * When the harness first sent it SIGKILL (epoch ms, taken before the signal), null if never: a
   * stream it still held ends with it, so its client sees that end after this instant.
   */
  readonly killedAtMs: number | null;
  /** How Envoy ended each long-lived test stream it served (test/support/stream-end-log.ts), so far. */
  streamEnds(): readonly StreamEnd[];
  /** Resolves once the process has exited and everything it logged has been read. */
  readonly logClosed: Promise<void>;
  readonly running: boolean;
  /** Requests the pod is serving now, as the app behind Envoy counts them. */
  activeRequests(): Promise<number>;
  /** SIGTERM, SIGKILL after `graceMs`; resolves when the process is gone and its helpers are closed. */
  stop(graceMs?: number): Promise<void>;
  tail(): string;
}

/** What pilot-agent takes from the pod's `proxy.istio.io/config` annotation (PodChanges writes it as JSON). */
export type IstioProxyConfig = { drainDurationSeconds: number; statsInclusionSuffixes: string[] };

export function istioProxyConfig(changes: Pick<PodChanges, 'podAnnotations'>): IstioProxyConfig {
  const raw = changes.podAnnotations['proxy.istio.io/config'];
  if (raw === undefined) throw new Error('the pod changes carry no proxy.istio.io/config annotation');
  const config = JSON.parse(raw) as { drainDuration?: string; proxyStatsMatcher?: { inclusionSuffixes?: string[] } };
  // Istio's defaults where the annotation is silent: drainDuration 45 s, no extra stats.
  return {
    drainDurationSeconds: config.drainDuration === undefined ? 45 : parseFloat(config.drainDuration),
    statsInclusionSuffixes: config.proxyStatsMatcher?.inclusionSuffixes ?? [],
  };
}

async function startRealEnvoy(
  version: string,
  ports: { listen: number; admin: number },
  config: IstioProxyConfig,
  envoyFilterPatches?: readonly unknown[],
): Promise<PodProxy> {
  // The pod's gRPC app (test/support/grpc-app.ts) beside its HTTP app: the gateway routes the gRPC service to it over HTTP/2.
  const grpcApp = await startGrpcApp();
  const tcpEcho = await startTcpEcho();
  let envoy: RealEnvoy;
  try {
    envoy = await startEnvoy({
      version,
      grpcUpstreamPort: grpcApp.port,
      tcpUpstreamPort: tcpEcho.port,
      drainTimeS: config.drainDurationSeconds,
      statsInclusionSuffixes: config.statsInclusionSuffixes,
      ports: { admin: ports.admin, traffic: ports.listen },
      // The stream limits' EnvoyFilter, as istiod applies it to the gateway's listeners.
      ...(envoyFilterPatches ? { envoyFilterPatches } : {}),
      // How each long-lived client's stream ended, in Envoy's own words (harness/long-lived-report.ts),
      // written within STREAM_END_FLUSH_MS so that a kill does not take the last ones with it.
      streamEndLog: true,
      fileFlushIntervalMs: STREAM_END_FLUSH_MS,
    });
  } catch (err) {
    await grpcApp.close();
    await tcpEcho.close();
    throw err;
  }
  return realEnvoyProxy(envoy, {
    upstreamPort: envoy.upstream!.port,
    tcpPort: envoy.tcpProxyPort!,
    activeRequests: async () => envoy.upstream!.open() + grpcApp.open() + tcpEcho.open(),
    afterStop: async () => {
      await grpcApp.close();
      await tcpEcho.close();
    },
  });
}

/**
 * A real Envoy as a pod's istio-proxy: its signals, exit, stop (SIGTERM, SIGKILL after `graceMs`)
 * and log tail; how it counts the requests it serves, and what else stops with it, are the caller's.
 */
export function realEnvoyProxy(
  envoy: RealEnvoy,
  o: { upstreamPort: number; tcpPort: number; activeRequests: () => Promise<number>; afterStop?: () => Promise<void> },
): PodProxy {
  let exitedAtMs: number | null = null;
  let killedAtMs: number | null = null;
  void envoy.exited.then(() => {
    exitedAtMs = Date.now();
  });
  return {
    label: `Envoy ${envoy.version}`,
    adminUrl: envoy.adminUrl,
    listenPort: envoy.trafficPort,
    upstreamPort: o.upstreamPort,
    tcpPort: o.tcpPort,
    signal(s) {
      if (!envoy.alive()) return;
      if (s === 'SIGKILL') killedAtMs ??= Date.now();
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
    get killedAtMs() {
      return killedAtMs;
    },
    streamEnds: () => envoy.streamEnds(),
    logClosed: envoy.logClosed,
    get running() {
      return envoy.alive();
    },
    activeRequests: o.activeRequests,
    async stop(graceMs = 1000) {
      if (envoy.alive()) {
        process.kill(envoy.pid, 'SIGTERM');
        const timer = setTimeout(() => {
          if (!envoy.alive()) return;
          killedAtMs ??= Date.now();
          process.kill(envoy.pid, 'SIGKILL');
        }, graceMs);
        await envoy.exited;
        clearTimeout(timer);
      }
      await envoy.stop();
      await o.afterStop?.();
    },
    tail: () => envoy.logs().split('\n').slice(-30).join('\n'),
  };
}

export function startProxy(
  choice: ProxyChoice,
  ports: { listen: number; admin: number },
  changes: Pick<PodChanges, 'podAnnotations'>,
  envoyFilterPatches?: readonly unknown[],
): Promise<PodProxy> {
  return startRealEnvoy(choice.version, ports, istioProxyConfig(changes), envoyFilterPatches);
}
