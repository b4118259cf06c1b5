import { HC_CONFIG_KEY } from '../../pod/names';
import { START_PROPAGATION_SECONDS } from '../../schema/start-path';
import { isObject } from '../../core/json';
import type { LbProbe } from '../lb-probe';
import type { LintObject } from '../objects';
import { gatewayService } from '../proxy-health';
import type { LintFindingDraft, LintRule } from '../rule';

/** kube-proxy's own minSyncPeriod (pkg/proxy/apis/config/v1alpha1/defaults.go), where neither --spec nor the input says another. */
const KUBE_PROXY_MIN_SYNC_SECONDS = 1;

/** The LB's probe of a gateway pod that does not pass through the gateway Service's rules: a hostPort, or another Service's port. */
function ownPathProbe(probes: readonly LbProbe[], traffic: LintObject): LbProbe | undefined {
  return probes.find((p) => p.via.kind === 'host-port' || (p.via.kind === 'node-port' && p.via.service !== traffic));
}

export const START_HOLD_RULES: LintRule[] = [
  {
    id: 'start-not-held',
    severity: 'warning',
    summary:
      "the LB probes a gateway pod by a path of its own (a hostPort, or a Service other than the gateway's traffic Service), and nothing holds its first 200 until the node's traffic rules lead to the pod",
    rationale:
      "A new pod's node is taken into the LB as soon as the probe passes there; its traffic reaches the pod only once kube-proxy's rules lead to it, after the kubelet found the pod ready, the EndpointSlice controller listed it and kube-proxy's next sync (minSyncPeriod 1 s by default) wrote the rules. Each Service has a slice of its own, programmed apart; a health Service publishing not-ready addresses leads to the pod before it is even ready, and a hostPort passes no rule at all. Until the traffic rule is there the node drops the LB's connections (externalTrafficPolicy Local, no ready local endpoint: kube-proxy's KUBE-EXTERNAL-SERVICES DROP), and every request sent there waits for the LB's connect timeout or fails: measured on the test cluster with HAProxy rise 1 (docs/cluster.md, \"The start half of a rollout\"; docs/facts.md §10). minReadySeconds paces the rollout but keeps nothing out of the LB. gracegate's sidecar holds its first 200 until the kubelet's readiness probe has been answered and the sync path has passed (hc config startHold, docs/hc.md \"The start hold\").",
    check: (ctx) =>
      ctx.gateways.flatMap((pod): LintFindingDraft[] => {
        const proxy = ctx.proxyOf(pod);
        const traffic = proxy ? gatewayService(ctx.servicesOf(pod), proxy)?.service : undefined;
        if (!traffic) return [];
        const probe = ownPathProbe(ctx.lbView(pod).probes, traffic);
        if (!probe) return [];
        const sidecar = ctx.hcSidecar(pod);
        // A sidecar whose config the input lacks: what it holds cannot be read here.
        if (sidecar && !sidecar.config) return [];
        const hold = sidecar?.config?.startHold;
        if (hold?.afterReadiness && hold.seconds > 0) return [];
        const seconds = ctx.options.plan?.plan.timings.startHoldSeconds ?? KUBE_PROXY_MIN_SYNC_SECONDS + START_PROPAGATION_SECONDS;
        const source = ctx.options.plan
          ? `${ctx.options.plan.source}: startHoldSeconds`
          : `kube-proxy's minSyncPeriod ${KUBE_PROXY_MIN_SYNC_SECONDS} s + the propagation measured on the test cluster, ${START_PROPAGATION_SECONDS} s`;
        const via =
          probe.via.kind === 'host-port'
            ? `a hostPort, before any rule of ${traffic.id}, the Service its traffic takes`
            : `not ${traffic.id}, the Service its traffic takes`;
        const numbers = { ...probe.numbers, startHoldSeconds: { value: seconds, source } };
        if (!sidecar) {
          return [
            {
              object: pod.owner,
              path: [...pod.specPath, 'containers'],
              message: `${probe.statement}: ${via}, so the probe of a new pod passes before its node's traffic rule leads to it, and nothing in the pod holds the first 200 until it does; meanwhile the node drops the traffic the LB sends there`,
              remediation: `add gracegate's sidecar (gracegate post-render, or a values overlay from gracegate synth), whose start hold waits for the kubelet's readiness probe and ${seconds}s more; or have the LB probe a port of ${traffic.id} itself`,
              numbers,
              lbProbe: probe,
              related: [{ object: traffic, path: ['spec', 'ports'] }],
            },
          ];
        }
        const configMap = sidecar.configMap!;
        // The config as the ConfigMap holds it (context.ts parsed it), with the hold set.
        const held = { ...(isObject(sidecar.configJson) ? sidecar.configJson : {}), startHold: { afterReadiness: true, seconds } };
        return [
          {
            object: configMap,
            path: ['data', HC_CONFIG_KEY],
            message: `${probe.statement}: ${via}, so the probe of a new pod passes before its node's traffic rule leads to it, and the gracegate sidecar's config holds nothing (startHold ${hold ? `afterReadiness ${hold.afterReadiness}, ${hold.seconds}s` : 'absent'}): it answers the LB 200 as soon as Envoy serves, and the node drops the traffic the LB sends there until its rule is written`,
            remediation: `set startHold {afterReadiness: true, seconds: ${seconds}} in the sidecar's config (gracegate synth writes it from the plan); the pods roll on the config's hash`,
            numbers,
            lbProbe: probe,
            related: [{ object: pod.owner, path: sidecar.container.path }],
            fix: {
              description: `the start hold: the kubelet's readiness probe, then ${seconds}s`,
              edits: [{ object: configMap.id, path: ['data', HC_CONFIG_KEY], set: `${JSON.stringify(held)}` }],
            },
          },
        ];
      }),
  },
];
