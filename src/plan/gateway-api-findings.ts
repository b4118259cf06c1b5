import type { FindingRule, PlanContext } from './plan-context';

/*
 * What follows from class-wide Gateway API defaults (spec.chart.defaultsForClass): one plan for
 * every Gateway of the class, written once into the ConfigMap istiod applies to each of them.
 */

const classWide = (ctx: PlanContext) => ctx.spec.spec.chart.defaultsForClass;

export const GATEWAY_API_RULES: readonly FindingRule[] = [
  {
    id: 'gateway-api-class-one-plan',
    severity: 'info',
    field: 'spec.chart.defaultsForClass.gateways',
    check: (ctx) => {
      const c = classWide(ctx);
      if (!c) return undefined;
      const className = ctx.spec.spec.chart.gatewayClassName ?? 'istio';
      return {
        message: `every Gateway of class ${className} gets this plan: its drain timeout (p99 ${ctx.spec.spec.traffic.longRequestP99Seconds} s), grace period (${ctx.timings.terminationGracePeriodSeconds} s), LB settings and replica count or HPA range. A Gateway of the class that is not in spec.chart.defaultsForClass.gateways gets the sidecar too, but no health Service, and its pods wait in ContainerCreating until the hc ConfigMap ${ctx.spec.metadata.name}-gracegate-hc exists in its namespace`,
        remediation:
          'list every Gateway of the class; give a Gateway whose traffic or LB differs its own spec (its own parametersRef ConfigMap, which istiod applies after the class defaults)',
      };
    },
  },
  {
    id: 'gateway-api-class-fixed-node-port',
    severity: 'error',
    field: 'spec.health.nodePort',
    check: (ctx) => {
      const c = classWide(ctx);
      const nodePort = ctx.spec.spec.health.nodePort;
      return c && c.gateways.length > 1 && nodePort !== undefined
        ? {
            message: `one NodePort (${nodePort}) for ${c.gateways.length} Gateways: each Gateway has its own health Service, and Kubernetes gives a NodePort to one Service only, so all but one of them are refused`,
            remediation: 'remove spec.health.nodePort (Kubernetes allocates one per Service; PLAN.md says how to read it)',
          }
        : undefined;
    },
  },
  {
    id: 'gateway-api-class-host-port',
    severity: 'error',
    field: 'spec.health.exposure',
    check: (ctx) => {
      const c = classWide(ctx);
      return c && c.gateways.length > 1 && ctx.spec.spec.health.exposure === 'hostPort'
        ? {
            message: `hostPort for ${c.gateways.length} Gateways: pods of two Gateways on one node both ask for host port ${ctx.spec.spec.health.hostPort ?? ctx.spec.spec.health.port}, and the second stays Pending; anti-affinity only keeps one Gateway's own pods apart`,
            remediation: 'use exposure nodePort (a health Service per Gateway, externalTrafficPolicy Local)',
          }
        : undefined;
    },
  },
  {
    id: 'gateway-api-class-anti-affinity-match-label-keys',
    severity: 'warning',
    field: 'spec.rollout.antiAffinity',
    check: (ctx) =>
      classWide(ctx) && ctx.rollout.antiAffinity === 'required'
        ? {
            message:
              "class-wide anti-affinity cannot name one Gateway, so its term selects pods with any gateway.networking.k8s.io/gateway-name and lets the scheduler add the pod's own value (matchLabelKeys: beta and on by default from Kubernetes 1.31). An older API server drops matchLabelKeys, and required anti-affinity then allows one gateway pod per node across every Gateway of the class",
            remediation: 'use antiAffinity preferred (a scheduler without matchLabelKeys then only weighs placement), or run Kubernetes 1.31 or later',
          }
        : undefined,
  },
];
