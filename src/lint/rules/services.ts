import { NLB_ANNOTATIONS } from '../../lb/nlb/annotations';
import type { LintContext } from '../context';
import { isLocal, servicePorts, type LbProbe } from '../lb-probe';
import { nlbTargetType } from '../lb-probe-nlb';
import { listAt, objAt, type LintObject } from '../objects';
import type { LintRule } from '../rule';

/** TEST-NET-1 (RFC 5737): the placeholder earlier gracegate versions wrote in network-policy.yaml for the LB's addresses. */
export const LB_SOURCE_PLACEHOLDER = '192.0.2.0/24';

function unique<T>(list: T[]): T[] {
  return [...new Set(list)];
}

/** The LB's probes of the gateways that go through a Service port on the nodes, each Service once with the first probe through it. */
function nodeProbes(ctx: LintContext): Array<{ svc: LintObject; probe: LbProbe }> {
  const seen = new Map<LintObject, LbProbe>();
  for (const pod of ctx.gateways)
    for (const p of ctx.lbView(pod).probes) if (p.via.kind === 'node-port' && !seen.has(p.via.service)) seen.set(p.via.service, p);
  return [...seen].map(([svc, probe]) => ({ svc, probe }));
}

export const SERVICE_RULES: LintRule[] = [
  {
    id: 'health-service-not-local',
    severity: 'warning',
    summary: 'the Service an external LB probes the pod through has no externalTrafficPolicy: Local',
    rationale:
      "With the default externalTrafficPolicy Cluster, kube-proxy answers a node's health probe from any node's pod, so one pod failing its health answer is invisible to the LB: the health endpoint, the only lever on an LB you cannot command, stops working. Local keeps a node's probe on that node's pod (docs/facts.md §6; Kubernetes \"Create an External Load Balancer\", preserving the client source IP).",
    check: (ctx) =>
      nodeProbes(ctx)
        .filter(({ svc }) => !isLocal(svc))
        .map(({ svc, probe }) => {
          const policy = objAt(svc.value, ['spec']).externalTrafficPolicy;
          return {
            object: svc,
            path: ['spec', policy === undefined ? 'type' : 'externalTrafficPolicy'],
            message: `${probe.statement}, and ${svc.id} (${objAt(svc.value, ['spec']).type}) has externalTrafficPolicy ${policy ?? 'Cluster (the default)'}: any node answers the probe from any ready gateway pod, so the LB never sees one pod leave`,
            remediation: 'set spec.externalTrafficPolicy: Local',
            numbers: {
              ...probe.numbers,
              externalTrafficPolicy: {
                value: String(policy ?? 'Cluster'),
                source: policy === undefined ? 'Kubernetes default' : `${svc.id} spec.externalTrafficPolicy`,
              },
            },
            lbProbe: probe,
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
        .filter((svc) => nlbTargetType(svc, ctx.lb?.behaviour) === 'instance')
        .map((svc) => {
          const inTree = svc.annotations[NLB_ANNOTATIONS.type] === 'nlb';
          const probe = ctx.gateways.flatMap((pod) => ctx.lbView(pod).probes).find((p) => ('service' in p.via ? p.via.service : undefined) === svc);
          const local = isLocal(svc);
          return {
            object: svc,
            path: ['metadata', 'annotations'],
            message: `${svc.id} puts the gateway behind an NLB with instance targets${ctx.lb && !svc.annotations[NLB_ANNOTATIONS.type] ? ` (${ctx.lb.source})` : ''}: ${probe ? `${probe.statement}; ` : ''}its health check probes ${local ? "kube-proxy's healthCheckNodePort, which answers from pod readiness" : "a node port that any node's pod answers"}, never the pod's own health endpoint`,
            remediation: `use ip targets: ${NLB_ANNOTATIONS.type}: external and ${NLB_ANNOTATIONS.targetType}: ip, with the health check pointed at the pod's health endpoint`,
            ...(probe ? { numbers: probe.numbers, lbProbe: probe } : {}),
            fix: {
              description: 'NLB ip targets (AWS Load Balancer Controller)',
              edits: [
                ...(inTree || !svc.annotations[NLB_ANNOTATIONS.type]
                  ? [{ object: svc.id, path: ['metadata', 'annotations', NLB_ANNOTATIONS.type], set: 'external' }]
                  : []),
                { object: svc.id, path: ['metadata', 'annotations', NLB_ANNOTATIONS.targetType], set: 'ip' },
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
          servicePorts(svc)
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
    rationale: `Earlier gracegate versions wrote network-policy.yaml with ${LB_SOURCE_PLACEHOLDER} (TEST-NET-1, RFC 5737) in place of the LB's addresses, so that it admitted nothing until filled in; synth now writes the NetworkPolicy into manifests.yaml from spec.networkPolicy.lbSourceRanges. Applied as is, the old file blocks the LB's probes of every gateway pod, and the LB takes them all out of the pool (docs/hc.md, "Exposure").`,
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
                remediation:
                  "replace the placeholder with the addresses the LB probes from (NetScaler SNIP, F5 self IP, the NLB's subnets, HAProxy's host), or delete this policy and apply synth's manifests.yaml with spec.networkPolicy.lbSourceRanges set",
              },
            ];
          }
        }
        return [];
      }),
  },
];
