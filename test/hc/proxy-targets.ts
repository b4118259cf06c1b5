/**
 * One interface over the proxies the hc tests run against: the stand-in (with the drain semantics
 * of a pinned version) and each pinned real Envoy (test/support/envoy-versions.json). A test written
 * against `ProxyTarget` runs unchanged on all of them.
 */
import * as net from 'node:net';
import { startEnvoyStandin, type StandinVersion } from '../support/envoy-standin';
import { pinnedEnvoys, startEnvoy } from '../support/real-envoy';
import { request } from '../support/http';
import { COUNTING_STATS_SUFFIXES } from '../../src/contract/envoy-stat-names';
import { sleep } from '../support/wait';

export interface ProxyTargetOptions {
  /** HCM drain_timeout. @default 5000 (Envoy's) */
  readonly hcmDrainTimeoutMs?: number;
  /** HCM idle_timeout. @default unset (1 h) */
  readonly hcmIdleTimeoutMs?: number;
  /** --drain-time-s (whole seconds: Envoy takes an integer). @default 45 */
  readonly drainTimeS?: number;
  /** `http.*.downstream_rq_active` exposed, as gracegate's pods configure Istio. @default true */
  readonly requestStats?: boolean;
  /** The 1.40 runtime guard non_graceful_drain_notifies_connections. @default the version's default (on from 1.40) */
  readonly plainDrainNotifiesConnections?: boolean;
}

export interface ProxyTarget {
  /** e.g. 'Envoy 1.36.4' or 'stand-in (1.36.4 semantics)' */
  readonly label: string;
  readonly kind: 'stand-in' | 'envoy';
  /** The version whose semantics it has. */
  readonly version: string;
  readonly trafficPort: number;
  readonly trafficUrl: string;
  readonly adminUrl: string;
  /** GET /stats?filter=… as name → value. */
  stats(filter?: string): Promise<Map<string, number>>;
  /** Requests being served behind the proxy now (the stand-in's own count; the upstream app's for Envoy). */
  requestsInFlight(): number;
  /** When requestsInFlight() last reached 0 (epoch ms), null while > 0. */
  zeroSince(): number | null;
  /** Admin calls the proxy has seen, as 'POST /drain_listeners?graceful 200' (Envoy's log lags up to 1 s). */
  adminCalls(): string[];
  /** The proxy process is still running. */
  alive(): boolean;
  stop(): Promise<void>;
}

export interface TargetSpec {
  readonly label: string;
  readonly kind: 'stand-in' | 'envoy';
  readonly version: string;
  start(options?: ProxyTargetOptions): Promise<ProxyTarget>;
}

function parseStats(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([^\s:]+): (-?\d+)$/.exec(line);
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

/** From 1.40 on, the stand-in reproduces 1.40.0; before, 1.36.4 (the versions measured). */
export function standinVersionFor(version: string): StandinVersion {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 1 || (major === 1 && minor >= 40) ? '1.40.0' : '1.36.4';
}

const NOTIFY_GUARD = 'envoy.reloadable_features.non_graceful_drain_notifies_connections';

export function envoyTarget(version: string): TargetSpec {
  const label = `Envoy ${version}`;
  return {
    label,
    kind: 'envoy',
    version,
    async start(o = {}) {
      const envoy = await startEnvoy({
        version,
        drainTimeS: o.drainTimeS ?? 45,
        ...(o.hcmDrainTimeoutMs !== undefined ? { hcmDrainTimeoutMs: o.hcmDrainTimeoutMs } : {}),
        ...(o.hcmIdleTimeoutMs !== undefined ? { hcmIdleTimeoutMs: o.hcmIdleTimeoutMs } : {}),
        // What gracegate's pod changes add to Istio's matcher (without request gauges: only the connections).
        statsInclusionSuffixes: o.requestStats === false ? ['downstream_cx_active'] : [...COUNTING_STATS_SUFFIXES],
        ...(o.plainDrainNotifiesConnections !== undefined ? { runtime: { [NOTIFY_GUARD]: o.plainDrainNotifiesConnections } } : {}),
      });
      return {
        label,
        kind: 'envoy',
        version,
        trafficPort: envoy.trafficPort,
        trafficUrl: envoy.trafficUrl,
        adminUrl: envoy.adminUrl,
        stats: (filter) => envoy.stats(filter),
        requestsInFlight: () => envoy.upstream!.open(),
        zeroSince: () => envoy.upstream!.idleSince(),
        adminCalls: () => envoy.adminCalls(),
        alive: () => envoy.alive(),
        stop: () => envoy.stop(),
      };
    },
  };
}

export function standinTarget(version: string): TargetSpec {
  const semantics = standinVersionFor(version);
  const label = `stand-in (${semantics} semantics)`;
  return {
    label,
    kind: 'stand-in',
    version: semantics,
    async start(o = {}) {
      const s = await startEnvoyStandin({
        version: semantics,
        drainTimeS: o.drainTimeS ?? 45,
        ...(o.hcmDrainTimeoutMs !== undefined ? { hcmDrainTimeoutMs: o.hcmDrainTimeoutMs } : {}),
        ...(o.hcmIdleTimeoutMs !== undefined ? { hcmIdleTimeoutMs: o.hcmIdleTimeoutMs } : {}),
        requestStats: o.requestStats ?? true,
        ...(o.plainDrainNotifiesConnections !== undefined ? { plainDrainNotifiesConnections: o.plainDrainNotifiesConnections } : {}),
      });
      return {
        label,
        kind: 'stand-in',
        version: semantics,
        trafficPort: s.listenPort,
        trafficUrl: s.trafficUrl,
        adminUrl: s.adminUrl,
        async stats(filter) {
          const res = await request(`${s.adminUrl}/stats${filter === undefined ? '' : `?filter=${encodeURIComponent(filter)}`}`);
          return parseStats(res.body);
        },
        requestsInFlight: () => s.counts().requests,
        zeroSince: () => s.counts().zeroSince,
        adminCalls: () => s.adminCalls.map((c) => `${c.method} ${c.path} ${c.status}`),
        alive: () => true,
        stop: () => s.stop(),
      };
    },
  };
}

/** Each pinned real Envoy. */
export function realEnvoyTargets(): TargetSpec[] {
  return pinnedEnvoys().map((p) => envoyTarget(p.version));
}

/** The stand-in with each pinned version's semantics, each followed by that real Envoy. */
export function conformanceTargets(): TargetSpec[] {
  return pinnedEnvoys().flatMap((p) => [standinTarget(p.version), envoyTarget(p.version)]);
}

/** The stand-in (Istio's Envoy's semantics) and every pinned real Envoy: where sidecar tests run. */
export function sidecarTargets(): TargetSpec[] {
  const pinned = pinnedEnvoys();
  return [standinTarget(pinned[0]!.version), ...pinned.map((p) => envoyTarget(p.version))];
}

/**
 * A new connection with one request: 'served' when a response comes back, 'not served' when the
 * connect is refused, reset, or closed without an answer.
 */
export function newConnection(port: number): Promise<'served' | 'not served'> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const done = (outcome: 'served' | 'not served') => {
      s.destroy();
      resolve(outcome);
    };
    s.setTimeout(2000, () => done('not served'));
    s.once('connect', () => s.write('GET / HTTP/1.1\r\nHost: gateway\r\n\r\n'));
    s.once('data', () => done('served'));
    s.once('error', () => done('not served'));
    s.once('close', () => done('not served'));
  });
}

/**
 * Whether the proxy still takes new connections after a drain call. The admin answers before every
 * worker has closed its listen socket: a connect in the first milliseconds can still be queued, then
 * reset (measured on 1.36.4 and 1.40.0, ~0-20 ms; never served when the machine is idle). So: new
 * connections must stop being served within 300 ms, and stay unserved.
 */
export async function takesNewConnections(port: number): Promise<boolean> {
  const deadline = Date.now() + 300;
  while ((await newConnection(port)) === 'served') {
    if (Date.now() > deadline) return true;
    await sleep(20);
  }
  for (let i = 0; i < 5; i++) if ((await newConnection(port)) === 'served') return true;
  return false;
}
