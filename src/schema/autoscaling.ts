import { z } from 'zod';
import { replicaCount } from '../model/spec-fields';

/**
 * `spec.autoscaling`: the gateway's HorizontalPodAutoscaler, in the HPA's own names
 * (autoscaling/v2), so the chart's HPA (istio/gateway `autoscaling.*`), istiod's Gateway API HPA
 * and the constructs' HPA all carry the same range and behaviour. The plan is computed for the
 * whole range, minReplicas to maxReplicas, instead of one replica count.
 */

/** One scaling policy: at most `value` pods (or percent of the count) per `periodSeconds`. */
const hpaPolicySchema = z.strictObject({
  type: z.enum(['Pods', 'Percent']).describe('Pods: a number of pods; Percent: a share of the current count'),
  value: z.int().min(1).describe('pods, or percent, per period (above 0)'),
  // The API server's bounds (autoscaling/v2 validation): 1 to 1800 s.
  periodSeconds: z.int().min(1).max(1800).describe('the window the policy counts changes in, 1-1800 s'),
});

/** The rules for one direction; an omitted field takes Kubernetes' default for that direction. */
const hpaRulesSchema = z.strictObject({
  // The API server's bounds: 0 to 3600 s.
  stabilizationWindowSeconds: z
    .int()
    .min(0)
    .max(3600)
    .optional()
    .describe(
      "how long a lower (scale-down) or higher (scale-up) recommendation must hold; default scale-down 300 s (kube-controller-manager's --horizontal-pod-autoscaler-downscale-stabilization), scale-up 0",
    ),
  selectPolicy: z
    .enum(['Max', 'Min', 'Disabled'])
    .optional()
    .describe('Max: the policy allowing the biggest change; Min: the smallest; Disabled: never in this direction. Default Max'),
  policies: z
    .array(hpaPolicySchema)
    .min(1)
    // A handful in practice; bounded because the planner evaluates each at every decision.
    .max(10)
    .optional()
    .describe('default scale-down: 100 Percent per 15 s; scale-up: the larger of 4 Pods and 100 Percent per 15 s'),
});

export const autoscalingSchema = z
  .strictObject({
    /** Fewest replicas the HPA keeps. @default 1 (Kubernetes' and istio/gateway's default). */
    minReplicas: replicaCount().default(1).describe("fewest replicas; default 1 (Kubernetes' and istio/gateway's default)"),
    /** Most replicas the HPA may run. Required, as in the HPA itself. */
    maxReplicas: replicaCount().describe('most replicas the HPA may run'),
    /**
     * Target average CPU utilisation. Omitted: the chart's own value (istio/gateway: 80), or
     * Kubernetes' 80 where gracegate writes the HPA itself.
     */
    targetCPUUtilizationPercentage: z
      .int()
      .min(1)
      .max(1000)
      .optional()
      .describe("target average CPU utilisation in percent; omitted: the chart's value (istio/gateway 80) or Kubernetes' default 80"),
    /** The HPA's `behavior`, as written into the HPA; omitted fields take Kubernetes' defaults. */
    behavior: z
      .strictObject({
        scaleDown: hpaRulesSchema.optional(),
        scaleUp: hpaRulesSchema.optional(),
      })
      .optional()
      .describe("the HPA's behavior (scaleDown, scaleUp); the plan reads scaleDown: how many pods leave at once"),
  })
  .superRefine((a, ctx) => {
    if (typeof a.minReplicas === 'number' && typeof a.maxReplicas === 'number' && a.maxReplicas < a.minReplicas) {
      ctx.addIssue({ code: 'custom', path: ['maxReplicas'], message: `must be at least minReplicas (${a.minReplicas})` });
    }
  });

export type AutoscalingSpec = z.output<typeof autoscalingSchema>;
export type HpaRules = NonNullable<NonNullable<AutoscalingSpec['behavior']>['scaleDown']>;
export type HpaPolicy = NonNullable<HpaRules['policies']>[number];
