import { LB_SOURCE_PLACEHOLDER } from '../../emit/health-network-policy';
import { NLB_ANNOTATION_PREFIX } from '../../lb-config/nlb-service-annotations';
import { HC_HEALTH_PORT_NAME } from '../../pod/names';
import type { LintContext } from '../context';
import { listAt, objAt, type LintObject } from '../objects';
import type { PodView } from '../pod-view';
import type { LintRule } from '../rule';
import { isObject } from '../../core/json';

/** Istio's status port (the agent's /healthz/ready), which LBs probe where nothing better exists. */
const ISTIO_STATUS_PORT = 15021;

type ServicePort = { index: number; name?: string; targetPort?: number | string; port?: number };

function portsOf(svc: LintObject): ServicePort[] {
  return listAt(svc.value, ['spec', 'ports']).flatMap((p, index) =>
    isObject(p)
      ? [
          {
            index,
            ...(typeof p.name === 'string' ? { name: p.name } : {}),
            ...(typeof p.targetPort === 'number' || typeof p.targetPort === 'string'
              ? { targetPort: p.targetPort }
              : typeof p.port === 'number'
                ? { targetPort: p.port }
                : {}),
            ...(typeof p.port === 'number' ? { port: p.port } : {}),
          },
        ]
      : [],
  );
}

/** An external LB reaches a Service of these types from outside the cluster. */
function external(svc: LintObject): boolean {
  const type = objAt(svc.value, ['spec']).type;
  return type === 'NodePort' || type === 'LoadBalancer';
}

/**
 * The NLB target type a LoadBalancer Service gets from the AWS controllers: `instance` for the
 * in-tree `nlb` type, the `nlb-target-type` annotation (default instance) for `external`; from
 * `--lb nlb` / the spec when the Service says nothing. docs/facts.md §3.
 */
function nlbTargetType(ctx: LintContext, svc: LintObject): 'ip' | 'instance' | undefined {
  if (objAt(svc.value, ['spec']).type !== 'LoadBalancer') return undefined;
  const a = svc.annotations;
  const type = a[`${NLB_ANNOTATION_PREFIX}type`];
  if (type === 'nlb') return 'instance';
  if (type === 'nlb-ip') return 'ip';
  if (type === 'external') return a[`${NLB_ANNOTATION_PREFIX}nlb-target-type`] === 'ip' ? 'ip' : 'instance';
  const lb = ctx.lb?.behaviour;
  if (lb?.model === 'nlb') return lb.probeReachesSidecar ? 'ip' : 'instance';
  return undefined;
}

/**
 * The Services through which an LB outside the cluster probes the pod: those targeting gracegate's
 * health port where the pod has the sidecar, else those carrying Istio's status port.
 */
function healthServices(ctx: LintContext, pod: PodView): Array<{ svc: LintObject; port: ServicePort }> {
  const sidecar = ctx.hcSidecar(pod);
  const services = ctx.servicesOf(pod).filter(external);
  if (sidecar) {
    const healthPort = sidecar.config?.healthPort;
    return services.flatMap((svc) =>
      portsOf(svc)
        .filter((p) => p.targetPort === HC_HEALTH_PORT_NAME || (healthPort !== undefined && p.targetPort === healthPort))
        .map((port) => ({ svc, port })),
    );
  }
  return services.flatMap((svc) =>
    portsOf(svc)
      .filter((p) => p.targetPort === ISTIO_STATUS_PORT || p.name === 'status-port')
      .map((port) => ({ svc, port })),
  );
}

function unique<T>(list: T[]): T[] {
  return [...new Set(list)];
}

export const SERVICE_RULES: LintRule[] = [
  {
    id: 'health-service-not-local',
    severity: 'warning',
    summary: 'the Service an external LB probes the pod through has no externalTrafficPolicy: Local',
    rationale:
      "With the default externalTrafficPolicy Cluster, kube-proxy answers a node's health probe from any node's pod, so one pod failing its health answer is invisible to the LB: the health endpoint, the only lever on an LB you cannot command, stops working. Local keeps a node's probe on that node's pod (docs/facts.md §6; Kubernetes \"Create an External Load Balancer\", preserving the client source IP).",
    check: (ctx) =>
      unique(ctx.gateways.flatMap((pod) => healthServices(ctx, pod).map((h) => h.svc)))
        .filter((svc) => objAt(svc.value, ['spec']).externalTrafficPolicy !== 'Local' && nlbTargetType(ctx, svc) !== 'instance')
        .map((svc) => {
          const policy = objAt(svc.value, ['spec']).externalTrafficPolicy;
          return {
            object: svc,
            path: ['spec', policy === undefined ? 'type' : 'externalTrafficPolicy'],
            message: `${svc.id} (${objAt(svc.value, ['spec']).type}) carries the health port the LB probes, with externalTrafficPolicy ${policy ?? 'Cluster (the default)'}: any node answers the probe from any ready gateway pod, so the LB never sees one pod leave`,
            remediation: 'set spec.externalTrafficPolicy: Local',
            fix: { description: 'externalTrafficPolicy Local', edits: [{ object: svc.id, path: ['spec', 'externalTrafficPolicy'], set: 'Local' }] },
          };
        }),
  },
  {
    id: 'health-probe-bypasses-pod',
    severity: 'error',
    summary: "an NLB with instance targets in front of the gateway: its health check never reaches the pod's own endpoint",
    rationale:
      "With instance targets the NLB probes nodes: with externalTrafficPolicy Local it probes kube-proxy's healthCheckNodePort, which answers from pod readiness (kubernetes pkg/proxy/healthcheck/service_health.go), with Cluster any node's pod. Either way the pod's own health endpoint is bypassed and a sidecar's signal never reaches the NLB; ip targets are probed at the pod (docs/facts.md §3).",
    check: (ctx) =>
      unique(ctx.gateways.flatMap((pod) => ctx.servicesOf(pod)))
        .filter((svc) => nlbTargetType(ctx, svc) === 'instance')
        .map((svc) => {
          const inTree = svc.annotations[`${NLB_ANNOTATION_PREFIX}type`] === 'nlb';
          const local = objAt(svc.value, ['spec']).externalTrafficPolicy === 'Local';
          return {
            object: svc,
            path: ['metadata', 'annotations'],
            message: `${svc.id} puts the gateway behind an NLB with instance targets${ctx.lb && !svc.annotations[`${NLB_ANNOTATION_PREFIX}type`] ? ` (${ctx.lb.source})` : ''}: its health check probes ${local ? "kube-proxy's healthCheckNodePort, which answers from pod readiness" : "a node port that any node's pod answers"}, never the pod's own health endpoint`,
            remediation: `use ip targets: ${NLB_ANNOTATION_PREFIX}type: external and ${NLB_ANNOTATION_PREFIX}nlb-target-type: ip, with the health check pointed at the pod's health endpoint`,
            fix: {
              description: 'NLB ip targets (AWS Load Balancer Controller)',
              edits: [
                ...(inTree || !svc.annotations[`${NLB_ANNOTATION_PREFIX}type`]
                  ? [{ object: svc.id, path: ['metadata', 'annotations', `${NLB_ANNOTATION_PREFIX}type`], set: 'external' }]
                  : []),
                { object: svc.id, path: ['metadata', 'annotations', `${NLB_ANNOTATION_PREFIX}nlb-target-type`], set: 'ip' },
              ],
            },
          };
        }),
  },
  {
    id: 'witness-port-exposed',
    severity: 'error',
    summary: "a Service exposes the gracegate sidecar's witness port",
    rationale:
      'The witness port answers istio-proxy\'s preStop GET /wait-closed, the sign that the pod is really being deleted; only the kubelet should reach it. Whoever reaches it through a Service can hold a proxy or fake the witness and start a drain on a restart (docs/hc.md, "Exposure" and "Restart safety").',
    check: (ctx) =>
      ctx.gateways.flatMap((pod) => {
        const witness = ctx.hcSidecar(pod)?.config?.witnessPort;
        if (witness === undefined) return [];
        return ctx.servicesOf(pod).flatMap((svc) =>
          portsOf(svc)
            .filter((p) => p.targetPort === witness)
            .map((p) => ({
              object: svc,
              path: ['spec', 'ports', p.index],
              message: `${svc.id} port ${p.name ?? p.port} targets ${witness}, the gracegate sidecar's witness port`,
              remediation: 'remove the port: the witness port must be in no Service',
              fix: {
                description: `remove port ${p.name ?? p.port} from ${svc.id}`,
                edits: [{ object: svc.id, path: ['spec', 'ports', p.index], remove: true as const }],
              },
            })),
        );
      }),
  },
  {
    id: 'hc-network-policy-placeholder',
    severity: 'error',
    summary: "gracegate's NetworkPolicy applied with its placeholder LB address",
    rationale: `gracegate synth writes network-policy.yaml with ${LB_SOURCE_PLACEHOLDER} (TEST-NET-1, RFC 5737) in place of the LB's addresses, so that it admits nothing until filled in. Applied as is, it blocks the LB's probes of every gateway pod, and the LB takes them all out of the pool (docs/hc.md, "Exposure").`,
    check: (ctx) =>
      unique(ctx.gateways.filter((pod) => ctx.hcSidecar(pod)).flatMap((pod) => ctx.networkPoliciesOf(pod))).flatMap((np) => {
        const ingress = listAt(np.value, ['spec', 'ingress']);
        for (let i = 0; i < ingress.length; i++) {
          const from = listAt(ingress[i], ['from']);
          const j = from.findIndex((f) => objAt(f, ['ipBlock']).cidr === LB_SOURCE_PLACEHOLDER);
          if (j >= 0) {
            return [
              {
                object: np,
                path: ['spec', 'ingress', i, 'from', j, 'ipBlock', 'cidr'],
                message: `${np.id} admits the health port only from ${LB_SOURCE_PLACEHOLDER}, the placeholder no LB has: the LB's probes are dropped and every gateway pod leaves its pool`,
                remediation: "replace the placeholder with the addresses the LB probes from (NetScaler SNIP, F5 self IP, the NLB's subnets, HAProxy's host)",
              },
            ];
          }
        }
        return [];
      }),
  },
];
