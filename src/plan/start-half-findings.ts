/** The start half's findings (src/plan/start-half.ts says what the start hold is and why). */
import { EVIDENCE } from '../model/evidence';
import type { FindingRule } from './plan-context';
import { startPathOf } from './start-half';

/** The start half's findings: what the hold is for, and where a new pod meets it. */
export const START_HALF_RULES: readonly FindingRule[] = [
  {
    id: 'start-lb-rise-beats-traffic-path',
    severity: 'info',
    field: 'spec.health.exposure',
    check: ({ spec, lb, timings }) => {
      if (timings.startHoldSeconds <= 0 || timings.lbRecoverSeconds >= timings.startHoldSeconds) return undefined;
      const { why } = startPathOf(spec, lb);
      return {
        message: `${why}. The LB takes a node in after ${timings.lbRecoverSeconds}s of good checks (lbRecoverSeconds), but the node's traffic rule leads to a new pod only up to ${timings.startHoldSeconds}s after the kubelet found it ready (kubeProxy.minSyncPeriod + kubeProxy.propagation); meanwhile the node drops every connection the LB sends (externalTrafficPolicy Local, no ready local endpoint), and an LB that does not retry a connect loses them. The sidecar holds its first 200 until the kubelet's readiness probe has been answered and ${timings.startHoldSeconds}s more (startHoldSeconds): every new pod joins the LB that much later`,
        remediation:
          'nothing to change while the sidecar holds the first 200 (hc config startHold); if you measured your cluster, set spec.kubeProxy.minSyncPeriod and spec.kubeProxy.propagation to its values',
        evidence: EVIDENCE.startHalf,
      };
    },
  },
  {
    id: 'start-new-node-local-traffic',
    severity: 'info',
    field: 'spec.nodes',
    check: ({ spec, lb, timings }) => {
      const most = spec.spec.autoscaling?.maxReplicas ?? spec.spec.replicas ?? 1;
      if (timings.startHoldSeconds <= 0 || spec.spec.nodes <= Math.min(most, spec.spec.autoscaling?.minReplicas ?? most)) return undefined;
      const how = spec.spec.autoscaling ? 'a scale-up, or a rollout surging onto a spare node,' : 'a rollout surging onto a spare node';
      return {
        message: `${how} puts a gateway pod on a node that had none: until that node's rules lead to it, its traffic NodePort drops every connection (kube-proxy's "has no local endpoints" DROP, externalTrafficPolicy Local), while ${startPathOf(spec, lb).why.replace(/^the LB/, "the LB's probe of that node")}. No minReadySeconds covers a scale-up: the sidecar's start hold (${timings.startHoldSeconds}s after the kubelet's readiness probe) does`,
        remediation: 'nothing to change while the sidecar holds the first 200 (hc config startHold)',
        evidence: EVIDENCE.startHalf,
      };
    },
  },
];
