import type { LintContext } from '../context';
import type { PodView } from '../pod-view';
import type { Fix, LintRule } from '../rule';
import { ANNOTATIONS } from '../../pod/names';
import { holdOf, proxyConfigFix } from './common';
import { CONNECTIONS_ACTIVE, REQUESTS_ACTIVE } from '../../contract/envoy-stat-names';
import type { Path } from '../../core/json';

/** The stat the gracegate sidecar counts in-flight requests by (docs/envoy.md). */
const REQUEST_STAT = REQUESTS_ACTIVE;
/** The stat it counts the listeners' connections by: without any, it cannot count at all. */
const CONNECTION_STAT = CONNECTIONS_ACTIVE;

/** The fix that appends one suffix to the pod's proxyStatsMatcher.inclusionSuffixes. */
function statsSuffixFix(ctx: LintContext, pod: PodView, suffix: string): Fix | undefined {
  const kept = ctx.proxyDrain(pod).statsInclusionSuffixes;
  // The pod's own suffix annotation wins over proxyStatsMatcher (Istio ignores the latter): add it there.
  if (kept.viaSuffixAnnotation) {
    return {
      description: `add ${suffix} to ${ANNOTATIONS.statsInclusionSuffixes}`,
      edits: [{ object: pod.owner.id, path: kept.path!, set: [...kept.value, suffix].join(',') }],
    };
  }
  return proxyConfigFix(ctx, pod, `add proxyStatsMatcher.inclusionSuffixes ${suffix}`, (c) => {
    const matcher = (typeof c.proxyStatsMatcher === 'object' && c.proxyStatsMatcher !== null ? c.proxyStatsMatcher : {}) as Record<string, unknown>;
    const list = Array.isArray(matcher.inclusionSuffixes) ? matcher.inclusionSuffixes : [];
    matcher.inclusionSuffixes = [...list, suffix];
    c.proxyStatsMatcher = matcher;
  });
}

/**
 * Where a stats suffix is missing: the pod's own suffix annotation when it has one (Istio then
 * ignores proxyStatsMatcher), else proxy.istio.io/config. For a finding's path, text and remedy.
 */
function missingSuffixAt(ctx: LintContext, pod: PodView, stat: string, remedy: string): { path: Path; missing: string; remediation: string } {
  const d = ctx.proxyDrain(pod);
  const kept = d.statsInclusionSuffixes;
  return kept.viaSuffixAnnotation
    ? {
        path: kept.path!,
        missing: `this pod's ${ANNOTATIONS.statsInclusionSuffixes} annotation (which Istio uses instead of proxyStatsMatcher.inclusionSuffixes) does not list it`,
        remediation: `add ${stat} to ${ANNOTATIONS.statsInclusionSuffixes} (comma-separated), or remove that annotation and let proxy.istio.io/config's proxyStatsMatcher apply`,
      }
    : { path: d.annotation?.path ?? [...pod.metaPath, 'annotations'], missing: "this pod's proxy.istio.io/config does not add it", remediation: remedy };
}

export const ISTIO_DRAIN_RULES: LintRule[] = [
  {
    id: 'istio-proxy-config-invalid',
    severity: 'error',
    summary: 'the proxy.istio.io/config annotation is not a YAML mapping',
    rationale:
      "Istio's injector reads the annotation as a ProxyConfig in YAML and fails the injection when it does not parse (istio/istio pkg/kube/inject/inject.go, mesh.ApplyProxyConfig): the pod is refused by the webhook, or runs without the drain settings the annotation meant to set (docs/facts.md §5).",
    check: (ctx) =>
      ctx.gateways.flatMap((pod) => {
        const a = ctx.proxyDrain(pod).annotation;
        if (!a || a.value !== null) return [];
        return [
          {
            object: pod.owner,
            path: a.path,
            message: `proxy.istio.io/config ${a.error}: ${JSON.stringify(a.text.length > 80 ? `${a.text.slice(0, 80)}...` : a.text)}`,
            remediation: 'write it as a YAML or JSON mapping, e.g. {"terminationDrainDuration": "5s"}',
          },
        ];
      }),
  },
  {
    id: 'istio-drain-duration-short',
    severity: 'warning',
    summary: "Istio's drainDuration is shorter than terminationDrainDuration: Envoy stops listening while the agent still waits",
    rationale:
      "On SIGTERM Istio's agent starts Envoy's graceful drain without skip_exit (istio/istio pkg/envoy/agent.go), which keeps accepting for --drain-time-s (Istio's drainDuration) and then stops the listeners; the agent kills Envoy terminationDrainDuration after SIGTERM (docs/facts.md §4, §5). With drainDuration the shorter, new connections are refused for the rest of that window, while an LB that has not noticed the pod still sends. gracegate's own hold stops the listeners itself before SIGTERM, so pods it holds are not concerned.",
    check: (ctx) =>
      ctx.gateways.flatMap((pod) => {
        if (holdOf(ctx, pod)?.kind === 'gracegate') return [];
        const d = ctx.proxyDrain(pod);
        if (d.exitOnZero.value || d.drainDurationSeconds.value >= d.terminationDrainSeconds.value) return [];
        const where = d.drainDurationSeconds.object ?? d.terminationDrainSeconds.object ?? pod.owner;
        const path: Path = d.drainDurationSeconds.path ?? d.terminationDrainSeconds.path ?? [...pod.metaPath, 'annotations'];
        const fromPod = where === pod.owner;
        const fix = fromPod
          ? proxyConfigFix(ctx, pod, `drainDuration ${d.terminationDrainSeconds.value}s (= terminationDrainDuration)`, (c) => {
              c.drainDuration = `${d.terminationDrainSeconds.value}s`;
            })
          : undefined;
        return [
          {
            object: where,
            path,
            message: `drainDuration ${d.drainDurationSeconds.value} s (${d.drainDurationSeconds.source}) is shorter than terminationDrainDuration ${d.terminationDrainSeconds.value} s (${d.terminationDrainSeconds.source}): Envoy stops its listeners ${d.drainDurationSeconds.value} s after SIGTERM and refuses new connections for the last ${Math.round((d.terminationDrainSeconds.value - d.drainDurationSeconds.value) * 1000) / 1000} s the agent keeps it`,
            remediation: `set drainDuration to at least terminationDrainDuration (${d.terminationDrainSeconds.value}s)`,
            numbers: {
              drainDuration: { value: d.drainDurationSeconds.value, source: d.drainDurationSeconds.source },
              terminationDrainDuration: { value: d.terminationDrainSeconds.value, source: d.terminationDrainSeconds.source },
            },
            formula: 'drainDuration >= terminationDrainDuration',
            ...(fix ? { fix } : {}),
          },
        ];
      }),
  },
  {
    id: 'istio-exit-on-zero-held-proxy',
    severity: 'warning',
    summary: 'EXIT_ON_ZERO_ACTIVE_CONNECTIONS on a proxy that a preStop already holds',
    rationale:
      "With EXIT_ON_ZERO_ACTIVE_CONNECTIONS Istio's agent, after SIGTERM, waits until Envoy's active downstream connections reach 0 (docs/facts.md §5). A drain never closes an idle keep-alive connection, and an LB's pooled connections stay open (docs/envoy.md), so after a hold has already waited out the LB and the drain the agent waits on until the kubelet's SIGKILL: every termination lasts the whole grace period.",
    check: (ctx) =>
      ctx.gateways.flatMap((pod) => {
        const hold = holdOf(ctx, pod);
        const d = ctx.proxyDrain(pod);
        if (!d.exitOnZero.value || !hold || hold.kind === 'none') return [];
        const fix =
          d.exitOnZero.object === pod.owner && d.exitOnZero.path
            ? d.exitOnZero.source.startsWith('env ')
              ? {
                  description: "remove EXIT_ON_ZERO_ACTIVE_CONNECTIONS from the proxy's env",
                  edits: [{ object: pod.owner.id, path: d.exitOnZero.path.slice(0, -1), remove: true as const }],
                }
              : proxyConfigFix(ctx, pod, 'remove proxyMetadata.EXIT_ON_ZERO_ACTIVE_CONNECTIONS', (c) => {
                  const meta = c.proxyMetadata as Record<string, unknown>;
                  delete meta.EXIT_ON_ZERO_ACTIVE_CONNECTIONS;
                  if (Object.keys(meta).length === 0) delete c.proxyMetadata;
                })
            : undefined;
        return [
          {
            object: d.exitOnZero.object ?? pod.owner,
            path: d.exitOnZero.path ?? [...pod.metaPath, 'annotations'],
            message: `EXIT_ON_ZERO_ACTIVE_CONNECTIONS (${d.exitOnZero.source}) makes Istio's agent wait for zero active connections after ${hold.proxy.name}'s preStop hold; an LB's idle pooled connections never close on a drain, so the pod runs until the kubelet kills it at terminationGracePeriodSeconds ${pod.graceSeconds}`,
            remediation:
              'remove EXIT_ON_ZERO_ACTIVE_CONNECTIONS: the hold already waits for the LB and the drain, and terminationDrainDuration then bounds the rest',
            ...(fix ? { fix } : {}),
          },
        ];
      }),
  },
  {
    id: 'hc-stats-matcher-missing',
    severity: 'warning',
    summary: "a gracegate sidecar's proxy does not expose downstream_rq_active (proxyStatsMatcher)",
    rationale:
      "The sidecar counts in-flight requests by the HTTP connection managers' downstream_rq_active; Istio's default stats matcher drops it, and the sidecar then counts connections, which a drain never closes while idle, so the sequence waits for the drain timeout whenever an LB pools connections (docs/envoy.md).",
    check: (ctx) =>
      ctx.gateways.flatMap((pod) => {
        if (!ctx.hcSidecar(pod)) return [];
        const d = ctx.proxyDrain(pod);
        if (d.annotation && d.annotation.value === null) return [];
        const suffixes = d.statsInclusionSuffixes.value;
        if (suffixes.some((s) => REQUEST_STAT.endsWith(s))) return [];
        const fix = statsSuffixFix(ctx, pod, REQUEST_STAT);
        const at = missingSuffixAt(ctx, pod, REQUEST_STAT, `add proxyStatsMatcher: {inclusionSuffixes: [${REQUEST_STAT}]} to proxy.istio.io/config`);
        return [
          {
            object: pod.owner,
            path: at.path,
            message: `the gracegate sidecar counts requests by ${REQUEST_STAT}, which Istio's default stats matcher drops and ${at.missing}: the sidecar falls back to counting connections, and an LB's idle pooled connections then hold the drain until its timeout`,
            remediation: at.remediation,
            ...(fix ? { fix } : {}),
          },
        ];
      }),
  },
  {
    id: 'hc-stats-matcher-no-connections',
    severity: 'error',
    summary: "a gracegate sidecar's proxy does not expose downstream_cx_active (proxyStatsMatcher, or EXIT_ON_ZERO_ACTIVE_CONNECTIONS)",
    rationale:
      "The sidecar sums the listeners' downstream_cx_active (and takes out the connections of HTTP connection managers it counts by requests). Istio's stats matcher keeps downstream_cx_active only when the pod sets EXIT_ON_ZERO_ACTIVE_CONNECTIONS (istio/istio pkg/bootstrap/config.go); otherwise the sidecar finds no statistic to count, reads that as 'cannot count', never as 0, and stays in FAULT: the LB's probe fails and the pod takes no traffic.",
    check: (ctx) =>
      ctx.gateways.flatMap((pod) => {
        if (!ctx.hcSidecar(pod)) return [];
        const d = ctx.proxyDrain(pod);
        if (d.annotation && d.annotation.value === null) return [];
        if (d.exitOnZero.value === true) return [];
        if (d.statsInclusionSuffixes.value.some((s) => CONNECTION_STAT.endsWith(s))) return [];
        const fix = statsSuffixFix(ctx, pod, CONNECTION_STAT);
        const at = missingSuffixAt(
          ctx,
          pod,
          CONNECTION_STAT,
          `add ${CONNECTION_STAT} to proxyStatsMatcher.inclusionSuffixes in proxy.istio.io/config (gracegate synth writes both suffixes)`,
        );
        return [
          {
            object: pod.owner,
            path: at.path,
            message: `the gracegate sidecar counts the listeners' connections by ${CONNECTION_STAT}, which Istio's stats matcher keeps only with EXIT_ON_ZERO_ACTIVE_CONNECTIONS, and ${at.missing}: the sidecar cannot count, stays in FAULT, and the LB's probe fails`,
            remediation: at.remediation,
            ...(fix ? { fix } : {}),
          },
        ];
      }),
  },
];
