import { DEFAULT_COUNTING_EXCLUDE, DEFAULT_COUNTING_INCLUDE, hcConfigSchema, type HcConfigInput } from '../contract/hc-config';
import type { Plan } from '../plan/plan-gateway';
import { HC_STATE_FILE } from './names';
import { GracegateError, inputMessage } from '../core/errors';

/**
 * How long the sidecar's /drain waits for istio-proxy's preStop (the termination witness) to
 * arrive. Kubelet starts every container's preStop at once (docs/facts.md §6), so on a real pod
 * deletion the witness arrives within moments; 10 s covers a slow kubelet without letting a
 * restart-triggered preStop hang the restarting container for long.
 */
export const WITNESS_WINDOW_SECONDS = 10;

/** Every admin call is to Envoy on localhost; 1 s means Envoy is stuck, not slow. */
export const ENVOY_ADMIN_TIMEOUT_SECONDS = 1;

/**
 * The sidecar's configuration (`/etc/gracegate/hc.json`), mapped one to one from the plan. The
 * sidecar decides nothing the plan already decided: order, timeouts, buffer, poll, soft signal.
 * Every field is written out (none left to the sidecar's defaults) so the ConfigMap alone tells an
 * SRE what the pod will do.
 */
export function hcConfigFor(plan: Plan): HcConfigInput {
  const { health, proxy } = plan;
  const signal = plan.loadBalancer.gracefulSignal;
  return {
    sequence: plan.sequence,
    drainTimeoutSeconds: plan.timings.drainTimeoutSeconds,
    lbBufferSeconds: plan.timings.lbBufferSeconds,
    // The LB's first 200 waits for the kubelet's readiness probe, then startHoldSeconds more
    // (0 where the LB's probe passes through the traffic path itself: docs/hc.md, "The start hold").
    startHold: { afterReadiness: true, seconds: plan.timings.startHoldSeconds },
    pollIntervalSeconds: plan.timings.pollIntervalSeconds,
    // Only soft-drain answers the soft signal; the other orders go straight to the hard 503.
    ...(plan.sequence === 'soft-drain' && signal ? { softSignal: { status: signal.status, ...(signal.body !== undefined ? { body: signal.body } : {}) } } : {}),
    envoyAdmin: `http://127.0.0.1:${proxy.adminPort}`,
    envoyAdminTimeoutSeconds: ENVOY_ADMIN_TIMEOUT_SECONDS,
    healthPort: health.port,
    controlPort: health.controlPort,
    witnessPort: health.witnessPort,
    metricsPort: plan.observability.metricsPort,
    finalScrapeWaitSeconds: plan.timings.finalScrapeWaitSeconds,
    ...(plan.observability.scrapers?.length ? { metricsScrapers: [...plan.observability.scrapers] } : {}),
    stateFile: HC_STATE_FILE,
    counting: { include: [...DEFAULT_COUNTING_INCLUDE], exclude: [...DEFAULT_COUNTING_EXCLUDE] },
    // Restarts must not drain (contour#4851): the sequence starts only when istio-proxy's preStop
    // (GET /wait-closed) is also waiting, which happens on pod deletion, never on a restart.
    // The kubelet's hook sources beyond the node's addresses and the pod's gateway, where the CNI
    // sends the node's traffic from elsewhere (spec.health.witnessAllowFrom).
    terminationWitness: {
      required: true,
      windowSeconds: WITNESS_WINDOW_SECONDS,
      ...(health.witnessAllowFrom.length > 0 ? { allowFrom: [...health.witnessAllowFrom] } : {}),
    },
  };
}

/** The sidecar would refuse this config at start-up (crash-looping the pod): say so before deploying. */
export class HcConfigRejectedError extends GracegateError {}

/**
 * Checks a config with the sidecar's own schema (src/contract/hc-config.ts), so synth and the post-renderer
 * never ship a ConfigMap the sidecar refuses. Throws HcConfigRejectedError naming each field.
 */
export function checkHcConfig(config: HcConfigInput): void {
  const result = hcConfigSchema.safeParse(config, { error: inputMessage });
  if (result.success) return;
  const problems = result.error.issues.map((i) => `hc config ${i.path.join('.') || '(root)'}: ${i.message}`);
  throw new HcConfigRejectedError(`the hc sidecar would refuse the config this plan maps to:\n${problems.join('\n')}`);
}
