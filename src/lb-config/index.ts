import type { LbModel, SettingsOf } from '../lb/registry';
import type { Plan } from '../plan/plan-gateway';
import { renderCitrix } from './citrix';
import { renderEnvoy } from './envoy';
import { renderF5 } from './f5';
import { renderHaproxy } from './haproxy';
import { renderNlb } from './nlb';
import { nlbNamespaceLabels, nlbServiceAnnotations } from './nlb-service-annotations';
import type { LbConfigInput } from './text';
import { chosenOrder, lossText } from '../plan/order-choice';
import { describeFix } from '../core/fix';

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

function render(input: LbConfigInput): string {
  const lb = input.plan.loadBalancer.settings;
  const use = <M extends LbModel>(model: M, settings: SettingsOf<M>) => LB_CONFIGS[model].lbConfig(settings, input);
  return use(lb.model, lb);
}

/** A config's settings: its lines that are not comments, for comparing two renderings. */
const settingLines = (text: string): string[] => text.split('\n').filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));

/**
 * The LB-side settings the plan assumes, in the syntax of the plan's LB vendor, then, where the
 * plan expects a loss, each LB setting that would lower it (plan.lbOptions) as an option: the lines
 * it changes, rendered by the same vendor emitter for the setting, with the loss it removes. Pure.
 */
export function renderLbConfig(input: LbConfigInput): string {
  const main = render(input);
  const { plan } = input;
  if (plan.lbOptions.length === 0) return main;
  const chosen = chosenOrder(plan);
  const mine = new Set(settingLines(main));
  const options = plan.lbOptions.flatMap((option) => {
    const alt = render({ ...input, plan: { ...plan, sequence: option.order, loadBalancer: { ...plan.loadBalancer, settings: option.settings } } });
    const changed = settingLines(alt).filter((l) => !mine.has(l));
    return [
      `# option: ${option.fix.description}: the plan would run ${option.order}, expected to lose ${lossText(option.expected)} requests per pod termination instead of ${lossText(chosen.expected)} (${lossText(chosen.expected - option.expected)} fewer); in the spec: ${describeFix(option.fix)}; the lines it changes:`,
      ...(changed.length > 0 ? changed.map((l) => `#   ${l.trim()}`) : ['#   (no line of this config: the setting lives elsewhere on the LB)']),
    ];
  });
  return `${main}\n# Options the LB team can take: each removes expected loss; plan again with the spec change before applying one.\n${options.join('\n')}\n`;
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
