import type { LbModel, SettingsOf } from '../lb/registry';
import type { Plan } from '../plan/plan-gateway';
import { renderCitrix } from './citrix';
import { renderEnvoy } from './envoy';
import { renderF5 } from './f5';
import { renderHaproxy } from './haproxy';
import { renderNlb } from './nlb';
import { nlbNamespaceLabels, nlbServiceAnnotations } from './nlb-service-annotations';
import type { LbConfigInput } from './text';

export type { LbConfigInput, ServerAddress } from './text';

/**
 * One LB vendor as rendering sees it: what a finished plan asks of the LB, one file per vendor in
 * this folder beside the vendor's planning side in `src/lb/<model>/`.
 */
export type LbConfigVendor<S> = {
  /** The LB-side settings the plan assumes, in the vendor's own syntax, every line explained. */
  lbConfig(lb: S, input: LbConfigInput): string;
  /** Annotations the gateway's own Service needs (a controller that reads them); none for most. */
  serviceAnnotations?(lb: S, plan: Plan): Record<string, string>;
  /** Labels the gateway's namespace needs (a controller's webhook that reads them); none for most. */
  namespaceLabels?(lb: S): Record<string, string>;
};

/** Every vendor's rendering, keyed by model as src/lb/registry.ts keys its planning. */
export const LB_CONFIGS: { readonly [M in LbModel]: LbConfigVendor<SettingsOf<M>> } = {
  citrix: { lbConfig: renderCitrix },
  f5: { lbConfig: renderF5 },
  nlb: { lbConfig: renderNlb, serviceAnnotations: nlbServiceAnnotations, namespaceLabels: nlbNamespaceLabels },
  haproxy: { lbConfig: renderHaproxy },
  envoy: { lbConfig: renderEnvoy },
};

/** The LB-side settings the plan assumes, in the syntax of the plan's LB vendor. Pure. */
export function renderLbConfig(input: LbConfigInput): string {
  const lb = input.plan.loadBalancer.settings;
  const use = <M extends LbModel>(model: M, settings: SettingsOf<M>) => LB_CONFIGS[model].lbConfig(settings, input);
  return use(lb.model, lb);
}

/** Annotations the gateway's own Service needs for the plan's LB (only a controller-driven LB has any). */
export function lbServiceAnnotations(plan: Plan): Record<string, string> {
  const lb = plan.loadBalancer.settings;
  const use = <M extends LbModel>(model: M, settings: SettingsOf<M>) => LB_CONFIGS[model].serviceAnnotations?.(settings, plan) ?? {};
  return use(lb.model, lb);
}

/** Labels the gateway's namespace needs for the plan's LB (only a controller with a webhook has any). */
export function lbNamespaceLabels(plan: Plan): Record<string, string> {
  const lb = plan.loadBalancer.settings;
  const use = <M extends LbModel>(model: M, settings: SettingsOf<M>) => LB_CONFIGS[model].namespaceLabels?.(settings) ?? {};
  return use(lb.model, lb);
}
