import { removeAt, setAt, specPath, type Fix } from '../core/fix';
import { chosenOrder, confirmedFixes, fateParts, LOSSLESS_BELOW, lossText, ownLoss, type OrderCost } from './order-choice';
import { VENDOR_RULES, vendorTexts } from '../lb/registry';
import { EVIDENCE } from '../model/evidence';
import { applyRules, forProduct, type Finding } from '../model/finding';
import { GRACE_PERIOD_TOO_LONG, type GracePeriodFacts } from '../model/grace-period';
import {
  ANTI_AFFINITY_UNSCHEDULABLE,
  AUTOSCALE_ANTI_AFFINITY_BLOCKS_SCALE_UP,
  AUTOSCALE_MIN_ONE,
  ROLLOUT_SURGE_DEADLOCK,
  ROLLOUT_TAKES_ALL_PODS,
  SINGLE_REPLICA,
} from '../model/rollout';
import { atLeast, chartVersion } from './chart-version';
import { connectCutEstimate } from './connect-cut-estimate';
import { GATEWAY_API_RULES } from './gateway-api-findings';
import { kubernetesVersionOf, NATIVE_SIDECAR_GA, NATIVE_SIDECAR_ON_BY_DEFAULT, planHcSidecar, versionAtLeast, versionText } from './hc-sidecar';
import { LONG_LIVED_RULES } from './long-lived';
import type { FindingRule, PlanContext } from './plan-context';
import { SCALE_DOWN_RULES } from './scaling';
import { START_HALF_RULES } from './start-half-findings';
import { ISTIO_TERMINATION_DRAIN_SECONDS, longestRequestSeconds } from './timings';

export type { FindingRule, PlanContext };

/** The sequence against the LB: what drain-first costs where the LB cannot make it lossless. */
const SEQUENCE_RULES: readonly FindingRule[] = [
  {
    id: 'drain-first-without-redispatch',
    severity: 'error',
    field: 'spec.loadBalancer',
    check: ({ sequence, lb, spec, alternatives }) =>
      sequence === 'drain-first' && lb.refused.value === 'failed'
        ? {
            message: `the LB cuts sessions on DOWN and does not re-send refused connections (${lb.refused.detail}): drain-first trades resets for refused connections, each failing only after the LB's own retries`,
            remediation: vendorTexts(lb.model).refusedConnectionsFix,
            fixes: confirmedFixes(alternatives(), false, spec.spec.sequence !== undefined),
            expectedLoss: 'refused-connections',
            evidence: EVIDENCE.refusedConnections,
          }
        : undefined,
  },
  {
    id: 'drain-first-connection-reuse',
    severity: 'warning',
    field: 'spec.loadBalancer',
    check: ({ sequence, lb, spec: { spec: s }, timings }) => {
      if (sequence !== 'drain-first' || !lb.reuse.drainFirst) return undefined;
      const two = 2 * s.traffic.longRequestP99Seconds;
      const override =
        s.drain.timeout !== undefined && s.drain.timeout < two
          ? ` spec.drain.timeout ${s.drain.timeout}s is below two requests (2 x ${s.traffic.longRequestP99Seconds}s): the timeout can fire while the second runs, and the flush at DOWN cuts it.`
          : '';
      return {
        message: `${lb.reuse.detail}. Envoy closes a kept-alive connection only with the first response it begins after the drain, so each connection the LB holds carries one more request, served in full: in-flight can last two requests, and the drain timeout (${timings.drainTimeoutSeconds}s) waits for two. In-flight 0 is still not final: a request the LB sends on an idle connection after [4], while health already fails but before DOWN, is served too, and if it is still running at DOWN the flush cuts it.${override}`,
        remediation: vendorTexts(lb.model).connectionReuseFix,
        expectedLoss: 'reused-connection-cut-at-down',
        evidence: EVIDENCE.connectionReuse,
      };
    },
  },
  {
    id: 'drain-first-cuts-connects-at-down',
    severity: 'info',
    field: 'spec.loadBalancer',
    check: ({ sequence, lb, spec, alternatives }) =>
      sequence === 'drain-first'
        ? {
            message:
              'drain-first leaves one race the pod cannot close: until DOWN the LB keeps choosing this pod; the pod refuses each new connection and the LB re-sends it, but a request whose connect is still under way at the instant of DOWN is cut with the flush (the LB kills every session assigned to the backend, connecting ones included). ' +
              `${connectCutEstimate(spec.spec.traffic, spec.spec.replicas ?? spec.spec.autoscaling!.maxReplicas)}; on a real HAProxy more were cut than the round trip alone predicts (the window also holds the LB's own reaction time): read the estimate as a floor`,
            remediation: `for zero, the LB has to stop choosing the pod before it flushes: ${vendorTexts(lb.model).gracefulAlternative}`,
            fixes: confirmedFixes(alternatives(), true, spec.spec.sequence !== undefined),
            expectedLoss: 'cut-connects-at-down',
            evidence: EVIDENCE.connectRaceAtDown,
          }
        : undefined,
  },
];

/** Where the chosen order's expected loss comes from, by cause. */
function lossCauses(o: OrderCost): string {
  return fateParts({ ...o.byFate, beyondDrainTimeout: o.beyondDrainTimeout }, [
    ['refused', (n) => `${n} refused`],
    ['cutAtDown', (n) => `${n} cut at DOWN`],
    ['cutAtExit', (n) => `${n} cut at exit`],
    ['keepAliveRace', (n) => `${n} in the keep-alive race`],
    ['beyondDrainTimeout', (n) => `of them ${n} longer than the drain timeout, which no order saves`],
  ]).join(', ');
}

/**
 * The LB settings that make an order lossless, in words, and as fixes: only those, since a fix must
 * clear its finding (test/plan/advice-circle.test.ts). Where spec.sequence forces the order, no LB
 * setting changes it, so the words name them and the fix is to let the plan choose.
 */
function losslessSettings(ctx: PlanContext, chosen: OrderCost): { text: string; fixes: Fix[] } {
  const lossless = ctx.alternatives().filter((a) => a.own < LOSSLESS_BELOW);
  if (lossless.length === 0) {
    const best = ctx.alternatives()[0];
    return {
      text:
        best !== undefined && best.own < ownLoss(chosen) - LOSSLESS_BELOW
          ? `no LB setting the vendor offers makes an order lossless; the closest: ${best.fix.description} (${best.order} then loses ${lossText(best.expected)})`
          : 'no LB setting the vendor offers lowers it',
      fixes: [],
    };
  }
  return {
    text: `an LB setting that makes one lossless (gracegate lb-config prints each as an option): ${lossless
      .map((a) => `${a.fix.description}: ${a.order} then loses ${lossText(a.expected)}, ${lossText(chosen.expected - a.expected)} fewer`)
      .join('; ')}${ctx.spec.spec.sequence !== undefined ? `; with spec.sequence removed, so the plan runs that order` : ''}`,
    fixes:
      ctx.spec.spec.sequence !== undefined
        ? lossless.map((a) => ({
            ...a.fix,
            description: `${a.fix.description}, the order left to the plan`,
            edits: [...a.fix.edits, removeAt(specPath('spec.sequence'))],
          }))
        : lossless.map((a) => a.fix),
  };
}

/** The runnable order with the least expected loss, whatever spec.sequence forces. */
const leastOf = (ctx: PlanContext): OrderCost => ctx.orders.filter((o) => o.runnable).sort((a, b) => a.expected - b.expected)[0]!;

/** The loss the chosen order is expected to cause, where no order the LB allows avoids it. */
const LOSS_RULES: readonly FindingRule[] = [
  {
    id: 'no-lossless-order',
    severity: 'warning',
    field: 'spec.loadBalancer',
    check: (ctx) => {
      const chosen = leastOf(ctx);
      if (ownLoss(chosen) < LOSSLESS_BELOW) return undefined;
      const settings = losslessSettings(ctx, chosen);
      const t = ctx.traffic;
      return {
        message: `no order this LB allows is lossless: ${chosen.order}, the least, is expected to lose ${lossText(chosen.expected)} requests per pod termination (${lossCauses(chosen)}) at ${t.requestsPerSecondPerPod} requests/s per pod (${t.requestsPerSecondSource}) with request lengths ${t.requestDurations} (${t.requestDurationsSource}); the other orders: ${ctx.orders
          .filter((o) => o !== chosen)
          .map((o) => `${o.order} ${o.runnable ? lossText(o.expected) : `not runnable (${o.notRunnable})`}`)
          .join(', ')}`,
        remediation: settings.text,
        ...(settings.fixes.length > 0 ? { fixes: settings.fixes } : {}),
        expectedLoss: chosen.byFate.refused >= chosen.byFate.cutAtDown ? 'refused-connections' : 'reset-sessions',
      };
    },
  },
  {
    id: 'sequence-not-least-loss',
    severity: 'warning',
    field: 'spec.sequence',
    check: (ctx) => {
      if (ctx.spec.spec.sequence === undefined) return undefined;
      const chosen = chosenOrder(ctx);
      const least = leastOf(ctx);
      return chosen.expected > least.expected + LOSSLESS_BELOW || !chosen.runnable
        ? {
            message: `spec.sequence forces ${chosen.order}, expected to lose ${lossText(chosen.expected)} requests per pod termination${chosen.runnable ? '' : ` (${chosen.notRunnable})`}; ${least.order} would lose ${lossText(least.expected)}`,
            remediation: `remove spec.sequence: the plan then runs ${least.order}`,
            fixes: [{ description: 'the order with the least expected loss', edits: [removeAt(specPath('spec.sequence'))] }],
          }
        : undefined;
    },
  },
  {
    id: 'expected-loss-above-limit',
    severity: 'error',
    field: 'spec.traffic.maxExpectedLossPerTermination',
    check: (ctx) => {
      const limit = ctx.spec.spec.traffic.maxExpectedLossPerTermination;
      const chosen = chosenOrder(ctx);
      if (limit === undefined || chosen.expected <= limit) return undefined;
      const settings = losslessSettings(ctx, chosen);
      return {
        message: `${chosen.order}, the order with the least expected loss behind this LB, is expected to lose ${lossText(chosen.expected)} requests per pod termination (${lossCauses(chosen)}), above spec.traffic.maxExpectedLossPerTermination ${limit}`,
        remediation: settings.text,
        ...(settings.fixes.length > 0 ? { fixes: settings.fixes } : {}),
      };
    },
  },
];

/** The pod, its grace period and the chart that has to carry the changes. */
const POD_RULES: readonly FindingRule[] = [
  {
    id: 'health-clusterip-unreachable',
    severity: 'error',
    field: 'spec.health.exposure',
    check: ({ spec, lb }) =>
      spec.spec.health.exposure === 'clusterIP' && !lb.probesPodIp
        ? {
            message: `a ${lb.model} LB outside the cluster cannot reach a ClusterIP health Service`,
            remediation: 'use exposure nodePort (with externalTrafficPolicy Local) or hostPort',
            fixes: [
              { description: 'exposure nodePort', edits: [setAt(specPath('spec.health.exposure'), 'nodePort')] },
              { description: 'exposure hostPort', edits: [setAt(specPath('spec.health.exposure'), 'hostPort')] },
            ],
          }
        : undefined,
  },
  {
    id: 'lb-probe-shared-node',
    severity: 'warning',
    field: 'spec.rollout.antiAffinity',
    // Only where required anti-affinity would fit the rollout (nodes for every pod and the surge,
    // or a rollout that frees a node first): else the plan chose preferred itself, and the rollout
    // findings say why (offering required there would send the user round in a circle).
    check: ({ spec, rollout }) =>
      spec.spec.health.exposure === 'nodePort' &&
      !rollout.onePodPerNode &&
      spec.spec.nodes >= (spec.spec.autoscaling?.maxReplicas ?? spec.spec.replicas ?? 1) + (rollout.maxUnavailable === 0 ? rollout.maxSurge : 0)
        ? {
            message: `anti-affinity ${rollout.antiAffinity}: two gateway pods can run on one node, and the LB's probe of that node (the health NodePort, externalTrafficPolicy Local) then reaches either of them; while one drains, the node answers 503 and 200 by turns, and the LB's DOWN of the node (a flush, where it flushes) cuts the other pod's sessions too`,
            remediation:
              'required anti-affinity, with spec.nodes above the replicas so a rollout can surge (or health exposure hostPort: one pod per node by construction)',
            fixes: [{ description: 'required anti-affinity', edits: [setAt(specPath('spec.rollout.antiAffinity'), 'required')] }],
            evidence: EVIDENCE.sharedNode,
          }
        : undefined,
  },
  {
    id: 'hostport-one-pod-per-node',
    severity: 'info',
    field: 'spec.health.exposure',
    check: ({
      spec: {
        spec: { health },
      },
    }) =>
      health.exposure === 'hostPort'
        ? {
            message: `hostPort ${health.hostPort ?? health.port} allows one gateway pod per node, which the rollout plan accounts for; and Pod Security's baseline and restricted levels refuse any pod with a host port, so in a namespace enforcing either, every gateway pod is refused at creation`,
            remediation:
              "label the gateway's namespace pod-security.kubernetes.io/enforce=privileged; use nodePort with externalTrafficPolicy Local if you need more pods than nodes, or a namespace that enforces baseline",
            evidence: 'https://kubernetes.io/docs/concepts/security/pod-security-standards/ (Baseline, "Host Ports")',
          }
        : undefined,
  },
  forProduct(
    GRACE_PERIOD_TOO_LONG,
    'gateway',
    ({ spec, timings }: PlanContext): GracePeriodFacts => ({
      product: 'gateway',
      terminationGracePeriodSeconds: timings.terminationGracePeriodSeconds,
      longRequestP99Seconds: spec.spec.traffic.longRequestP99Seconds,
    }),
  ),
  {
    id: 'drain-timeout-below-p99',
    severity: 'warning',
    field: 'spec.drain.timeout',
    check: ({ spec: { spec: s } }) =>
      s.drain.timeout !== undefined && s.drain.timeout < s.traffic.longRequestP99Seconds
        ? {
            message: `drain timeout ${s.drain.timeout}s is below the long-request p99 ${s.traffic.longRequestP99Seconds}s: more than 1% of long requests will be cut`,
            remediation: `raise spec.drain.timeout to at least ${longestRequestSeconds(s.traffic.longRequestP99Seconds)}s or remove it`,
            fixes: [
              {
                description: 'drain timeout 1.2 x p99',
                edits: [setAt(specPath('spec.drain.timeout'), longestRequestSeconds(s.traffic.longRequestP99Seconds))],
              },
              { description: 'the default drain timeout', edits: [removeAt(specPath('spec.drain.timeout'))] },
            ],
            expectedLoss: 'reset-sessions',
          }
        : undefined,
  },
  {
    id: 'chart-cannot-hold-proxy',
    severity: 'warning',
    field: 'spec.chart.version',
    // Measured on the real schemas: 1.26.8 already takes additionalContainers; what it lacks is
    // `lifecycle`, so the sidecar fits but the hold does not.
    check: ({ spec }) =>
      spec.spec.chart.kind === 'istio-gateway' && !atLeast(chartVersion(spec.spec.chart.version), 1, 27)
        ? {
            message:
              `istio/gateway ${spec.spec.chart.version} has no lifecycle value (added in 1.27): a values overlay cannot hold the istio-proxy container until the drain ends, so Envoy would exit ${ISTIO_TERMINATION_DRAIN_SECONDS} s after SIGTERM, mid-sequence` +
              (planHcSidecar(spec).kind === 'native'
                ? '; nor can it carry the native hc sidecar (its values schema takes initContainers, but its template renders none before 1.27)'
                : ''),
            remediation: "deliver with 'gracegate post-render' (Helm --post-renderer or Kustomize), or upgrade the chart to 1.27+",
          }
        : undefined,
  },
  {
    id: 'chart-no-grace-period',
    severity: 'warning',
    field: 'spec.chart.version',
    check: ({
      spec: {
        spec: { chart },
      },
    }) =>
      chart.kind === 'istio-gateway' && !atLeast(chartVersion(chart.version), 1, 19)
        ? {
            message: `istio/gateway ${chart.version} cannot set terminationGracePeriodSeconds (added in 1.19): pods get Kubernetes' 30 s`,
            remediation: "use 'gracegate post-render' or upgrade the chart",
          }
        : undefined,
  },
  {
    id: 'chart-no-strategy',
    severity: 'info',
    field: 'spec.chart.version',
    check: ({
      spec: {
        spec: { chart },
      },
    }) => {
      const v = chartVersion(chart.version);
      return chart.kind === 'istio-gateway' && atLeast(v, 1, 19) && !atLeast(v, 1, 24)
        ? {
            message: `istio/gateway ${chart.version} cannot set the Deployment strategy (added in 1.24)`,
            remediation: "use 'gracegate post-render' to set the rollout strategy, or upgrade the chart",
          }
        : undefined;
    },
  },
];

const SIDECAR = specPath('spec.health.sidecar');

/** The hc sidecar's kind against the cluster (docs/native-sidecar.md). */
const SIDECAR_RULES: readonly FindingRule[] = [
  {
    id: 'native-sidecar-unsupported',
    severity: 'error',
    field: 'spec.health.sidecar',
    check: ({ spec }) => {
      const v = kubernetesVersionOf(spec);
      return planHcSidecar(spec).kind === 'native' && v && !versionAtLeast(v, NATIVE_SIDECAR_ON_BY_DEFAULT)
        ? {
            message: `Kubernetes ${v.major}.${v.minor} has no native sidecars on by default (from ${versionText(NATIVE_SIDECAR_ON_BY_DEFAULT)}; 1.28 behind the SidecarContainers feature gate): the API server drops an init container's restartPolicy, the hc sidecar becomes a plain init container that never exits, and the gateway pod never starts`,
            remediation: 'spec.health.sidecar: container',
            fixes: [{ description: 'the ordinary container', edits: [setAt(SIDECAR, 'container')] }],
          }
        : undefined;
    },
  },
  {
    id: 'native-sidecar-version-unknown',
    severity: 'warning',
    field: 'spec.kubernetesVersion',
    check: ({ spec }) =>
      spec.spec.health.sidecar === 'native' && !kubernetesVersionOf(spec)
        ? {
            message: `a native sidecar needs Kubernetes ${versionText(NATIVE_SIDECAR_ON_BY_DEFAULT)} or later (GA in ${versionText(NATIVE_SIDECAR_GA)}); on an older cluster the hc becomes an init container that never exits and the pod never starts, and spec.kubernetesVersion does not say which this cluster is`,
            remediation: `set spec.kubernetesVersion (native needs ${versionText(NATIVE_SIDECAR_ON_BY_DEFAULT)}+), or drop spec.health.sidecar for the ordinary container`,
            fixes: [{ description: 'the ordinary container', edits: [removeAt(SIDECAR)] }],
          }
        : undefined,
  },
  {
    id: 'native-sidecar-before-ga',
    severity: 'info',
    field: 'spec.health.sidecar',
    check: ({ spec }) => {
      const v = kubernetesVersionOf(spec);
      return planHcSidecar(spec).kind === 'native' && v && versionAtLeast(v, NATIVE_SIDECAR_ON_BY_DEFAULT) && !versionAtLeast(v, NATIVE_SIDECAR_GA)
        ? {
            message: `native sidecars are beta (on by default) in Kubernetes ${v.major}.${v.minor}, GA from ${versionText(NATIVE_SIDECAR_GA)}; Istio's injector turns on its own native sidecars only when every kubelet is ${versionText(NATIVE_SIDECAR_GA)} or later`,
            remediation: `none needed if your nodes run ${v.major}.${v.minor} with the SidecarContainers gate on (the default); otherwise spec.health.sidecar: container`,
          }
        : undefined;
    },
  },
  {
    id: 'network-policy-lb-sources-unknown',
    severity: 'warning',
    field: 'spec.networkPolicy.lbSourceRanges',
    check: ({ spec }) => {
      const np = spec.spec.networkPolicy;
      return np.enabled && np.lbSourceRanges === undefined && np.lbNamespaces.length === 0
        ? {
            message: `the spec does not say where the LB's probes come from, so the NetworkPolicy synth writes leaves the health port (${spec.spec.health.port}) open to every source: any pod can read it and crowd the LB's probes out of its connection limits. The witness and metrics ports are closed all the same (the witness to all but the node, the metrics port to all but spec.networkPolicy.metrics)`,
            remediation:
              spec.spec.health.exposure === 'clusterIP'
                ? "set spec.networkPolicy.lbNamespaces to the in-cluster LB's namespaces (or lbSourceRanges to its pods' range)"
                : "set spec.networkPolicy.lbSourceRanges to the addresses the LB probes from (NetScaler SNIP, F5 self IPs, the NLB's subnets, HAProxy's hosts); with externalTrafficPolicy Local the pod sees them as they are",
          }
        : undefined;
    },
  },
  {
    id: 'witness-source-by-policy-only',
    severity: 'info',
    field: 'spec.health.witnessAllowFrom',
    check: ({ spec }) => {
      const { health, networkPolicy } = spec.spec;
      return health.witnessAllowFrom.length > 0 && networkPolicy.enabled
        ? {
            message: `the kubelet's hooks come from ${health.witnessAllowFrom.join(', ')} on this CNI, where other callers can send from too: the sidecar cannot tell the kubelet from them by address, so the NetworkPolicy synth writes (the witness port ${health.witnessPort} admits only the node, which a NetworkPolicy always lets in) is what keeps them from draining the gateway with two GETs`,
            remediation:
              'none in the spec: make sure the cluster enforces NetworkPolicy (an API server accepts a policy nobody enforces), and keep witnessAllowFrom to the addresses the hooks were seen from (the sidecar logs each refused hook with its source)',
            evidence: 'docs/hc.md, "Where the witness may come from"',
          }
        : undefined;
    },
  },
  {
    id: 'witness-port-unguarded',
    severity: 'warning',
    field: 'spec.networkPolicy.enabled',
    check: ({ spec }) => {
      const { health, networkPolicy } = spec.spec;
      return health.witnessAllowFrom.length > 0 && !networkPolicy.enabled
        ? {
            message: `the witness port ${health.witnessPort} serves ${health.witnessAllowFrom.join(', ')} (spec.health.witnessAllowFrom), where the sidecar cannot tell the kubelet from other callers, and synth writes no NetworkPolicy: unless a policy of yours admits only the node to port ${health.witnessPort}, any caller in those ranges drains the gateway with two GETs (/wait-closed held open, then /hc-stopping)`,
            remediation:
              'set spec.networkPolicy.enabled true (or close the witness port to all but the node in your own policy), on a cluster that enforces NetworkPolicy',
            evidence: 'docs/hc.md, "Where the witness may come from"',
            fixes: [{ description: 'synth writes the NetworkPolicy', edits: [setAt(specPath('spec.networkPolicy.enabled'), true)] }],
          }
        : undefined;
    },
  },
];

/** The rollout against the nodes (src/model/rollout.ts), for a fixed count or the HPA's range. */
const ROLLOUT_RULES: readonly FindingRule[] = [
  ROLLOUT_SURGE_DEADLOCK,
  ANTI_AFFINITY_UNSCHEDULABLE,
  AUTOSCALE_ANTI_AFFINITY_BLOCKS_SCALE_UP,
  SINGLE_REPLICA,
  ROLLOUT_TAKES_ALL_PODS,
  AUTOSCALE_MIN_ONE,
].map((rule) => forProduct(rule, 'gateway', (ctx: PlanContext) => ctx.rolloutCheck));

/**
 * Every rule of a gateway's plan, in the order the plan lists findings of one severity: the
 * sequence against the LB, the LB vendor's own traps (from its folder in src/lb/), the pod and
 * chart, the sidecar's kind, the rollout, the HPA's scale-downs, class-wide Gateway API defaults,
 * and long-lived streams.
 */
export const GATEWAY_RULES: readonly FindingRule[] = [
  ...LOSS_RULES,
  ...SEQUENCE_RULES,
  ...VENDOR_RULES.map((rule) => forVendor(rule)),
  ...POD_RULES,
  ...SIDECAR_RULES,
  ...ROLLOUT_RULES,
  ...SCALE_DOWN_RULES,
  ...GATEWAY_API_RULES,
  ...LONG_LIVED_RULES,
  ...START_HALF_RULES,
];

/** A vendor's rule as the gateway lists it: it reads the spec's LB block beside the plan. */
function forVendor(rule: (typeof VENDOR_RULES)[number]): FindingRule {
  return { id: rule.id, severity: rule.severity, field: rule.field, check: (ctx) => rule.check({ ...ctx, settings: ctx.spec.spec.loadBalancer }) };
}

/** The findings of a gateway's plan, in GATEWAY_RULES' order (planGateway sorts them by severity). */
export function gatewayFindings(ctx: PlanContext): Finding[] {
  return applyRules(GATEWAY_RULES, ctx);
}
