import { z } from 'zod';
import { DurationError, parseDurationSeconds } from '../core/duration';

/** A duration field: seconds as a number, or a string with a unit; always seconds after parsing. */
export const duration = z.union([z.number(), z.string()]).transform((value, ctx) => {
  try {
    return parseDurationSeconds(value);
  } catch (err) {
    if (!(err instanceof DurationError)) throw err;
    ctx.addIssue({ code: 'custom', message: err.message });
    return z.NEVER;
  }
});

/**
 * A duration with the bound its vendor enforces: `refusal` says, in the vendor's terms and with its
 * source, why a value outside it is refused (docs/facts.md §3 lists every bound).
 */
export function vendorDuration(ok: (seconds: number) => boolean, refusal: (seconds: number) => string) {
  return duration.superRefine((seconds, ctx) => {
    if (!ok(seconds)) ctx.addIssue({ code: 'custom', message: refusal(seconds) });
  });
}

/** A whole number in the range its vendor enforces, refused in the vendor's terms (docs/facts.md §3). */
export function vendorCount(min: number, max: number, refusal: (n: number) => string) {
  return z.int().superRefine((n, ctx) => {
    if (n < min || n > max) ctx.addIssue({ code: 'custom', message: refusal(n) });
  });
}

/** A TCP port. */
export const port = z.int().min(1).max(65535);

/** A Kubernetes DNS label (RFC 1123): object and container names. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The rollout settings a spec may override; the plan chooses each one it omits (src/plan/rollout.ts). */
export const rolloutSchema = z.strictObject({
  maxSurge: z.int().min(0).optional().describe('Deployment maxSurge; default chosen from replicas, nodes and anti-affinity'),
  maxUnavailable: z.int().min(0).optional().describe('Deployment maxUnavailable; default chosen from replicas, nodes and anti-affinity'),
  antiAffinity: z
    .enum(['required', 'preferred', 'none'])
    .optional()
    .describe('pod anti-affinity on kubernetes.io/hostname; default required when nodes allow one pod per node'),
});

/**
 * The most pods a spec may plan: the planner walks every count of an HPA's range and every scale-down
 * decision, so the count bounds its work. Kubernetes' own tested limits are 5,000 nodes and 150,000
 * pods in a cluster (kubernetes.io/docs/setup/best-practices/cluster-large); no gateway or workload
 * of one runs 10,000 replicas.
 */
export const REPLICAS_MAX = 10_000;
/** Kubernetes' tested limit of nodes in one cluster (kubernetes.io/docs/setup/best-practices/cluster-large). */
export const NODES_MAX = 5_000;

/** A replica count (spec.replicas, minReplicas, maxReplicas): 1 to REPLICAS_MAX. */
export const replicaCount = () => z.int().min(1).max(REPLICAS_MAX);
/** A node count: 1 to NODES_MAX. */
export const nodeCount = () => z.int().min(1).max(NODES_MAX);
