/** The start half's findings (src/plan/start-half.ts says what the start hold is and why). */
import { EVIDENCE } from '../model/evidence';
import { removeAt, setAt, specPath } from '../core/fix';
import type { FindingRule } from './plan-context';
import { PROXY_READINESS_GIVE_UP_SECONDS, proxyReadinessFit, startPathOf } from './start-half';

/** The start half's findings: what the hold is for, and where a new pod meets it. */
export const START_HALF_RULES: readonly FindingRule[] = [
  {
    id: 'start-lb-rise-beats-traffic-path',
    severity: 'info',
    field: 'spec.health.exposure',
    check: ({ lb, timings, healthProbe }) => {
      if (timings.startHoldSeconds <= 0 || timings.lbRecoverSeconds >= timings.startHoldSeconds) return undefined;
      const { why } = startPathOf(lb, healthProbe);
      return {
        message: `${why}. The LB takes a node in after ${timings.lbRecoverSeconds}s of good checks (lbRecoverSeconds), but the node's traffic rule leads to a new pod only up to ${timings.startHoldSeconds}s after the kubelet found it ready (kubeProxy.minSyncPeriod + kubeProxy.propagation); meanwhile the node drops every connection the LB sends (externalTrafficPolicy Local, no ready local endpoint), and an LB that does not retry a connect loses them. The sidecar holds its first 200 until the kubelet's readiness probe has been answered and ${timings.startHoldSeconds}s more (startHoldSeconds): every new pod joins the LB that much later`,
        remediation: `nothing to change while the sidecar holds the first 200 (hc config startHold); if you measured your cluster, set spec.kubeProxy.minSyncPeriod and spec.kubeProxy.propagation to its values. ${healthProbe.reason}`,
        evidence: EVIDENCE.startHalf,
      };
    },
  },
  {
    id: 'start-new-node-local-traffic',
    severity: 'info',
    field: 'spec.nodes',
    check: ({ spec, lb, timings, healthProbe }) => {
      const most = spec.spec.autoscaling?.maxReplicas ?? spec.spec.replicas ?? 1;
      if (timings.startHoldSeconds <= 0 || spec.spec.nodes <= Math.min(most, spec.spec.autoscaling?.minReplicas ?? most)) return undefined;
      const how = spec.spec.autoscaling ? 'a scale-up, or a rollout surging onto a spare node,' : 'a rollout surging onto a spare node';
      return {
        message: `${how} puts a gateway pod on a node that had none: until that node's rules lead to it, its traffic NodePort drops every connection (kube-proxy's "has no local endpoints" DROP, externalTrafficPolicy Local), while ${startPathOf(lb, healthProbe).why.replace(/^the LB/, "the LB's probe of that node")}. No minReadySeconds covers a scale-up: the sidecar's start hold (${timings.startHoldSeconds}s after the kubelet's readiness probe) does`,
        remediation: 'nothing to change while the sidecar holds the first 200 (hc config startHold)',
        evidence: EVIDENCE.startHalf,
      };
    },
  },
  {
    id: 'health-port-on-gateway-service-outlasted',
    severity: 'warning',
    field: 'spec.health.service',
    check: ({ spec, sequence, timings }) => {
      if (spec.spec.health.service !== 'gateway') return undefined;
      const { after, fits } = proxyReadinessFit(sequence, timings.drainTimeoutSeconds, timings.lbBufferSeconds);
      if (fits) return undefined;
      return {
        message: `spec.health.service gateway puts the health port on the gateway's own Service, whose rules reach a pod only while it is serving; ${sequence} needs the LB to hear the sidecar ${after}s after the proxy drain, but the drain closes istio-proxy's readiness listener (15021) and its injected probe can give up ${PROXY_READINESS_GIVE_UP_SECONDS}s later (four failures 15 s apart): from then the LB's probe is dropped, the LB marks the node DOWN by timeouts${sequence === 'health-first' ? '' : ' and, where it flushes on DOWN, cuts what is still draining'}`,
        remediation: "let the plan choose (remove spec.health.service), or spec.health.service own: a health Service of its own and the sidecar's start hold",
        fixes: [
          { description: 'the plan chooses', edits: [removeAt(specPath('spec.health.service'))] },
          { description: 'a health Service of its own', edits: [setAt(specPath('spec.health.service'), 'own')] },
        ],
        evidence: EVIDENCE.startHalf,
      };
    },
  },
];
