import { z } from 'zod';
import type { Fix } from '../core/fix';
import type { GivenPaths } from '../model/derived';
import type { RuleOf } from '../model/finding';
import type { LbBehaviour } from '../model/lb-behaviour';
import { citrix } from './citrix';
import { citrixSchema } from './citrix/schema';
import { envoy } from './envoy';
import { envoySchema } from './envoy/schema';
import { f5 } from './f5';
import { f5Schema } from './f5/schema';
import { haproxy } from './haproxy';
import { haproxySchema } from './haproxy/schema';
import { nlb } from './nlb';
import { nlbSchema } from './nlb/schema';
import type { LbVendor, VendorRuleContext, VendorTexts } from '../model/lb-vendor';

/**
 * The load balancer, described in its vendor's own words and defaults: one strict block per
 * vendor (a key the vendor does not have is an error, not a silently ignored typo), chosen by
 * `model`. An omitted field takes the vendor's documented default, so a spec records only what
 * differs from it.
 */
export const loadBalancerSchema = z.discriminatedUnion('model', [citrixSchema, f5Schema, nlbSchema, haproxySchema, envoySchema]);
export type LoadBalancerSpec = z.output<typeof loadBalancerSchema>;
export type LbModel = LoadBalancerSpec['model'];
export type SettingsOf<M extends LbModel> = Extract<LoadBalancerSpec, { model: M }>;

/** Every LB vendor gracegate knows, keyed by model; each is one folder of src/lb/. */
export const LB_VENDORS: { readonly [M in LbModel]: LbVendor<SettingsOf<M>> } = { citrix, f5, nlb, haproxy, envoy };
export const LB_MODELS = Object.keys(LB_VENDORS) as LbModel[];

/** Normalises any vendor's LB block into the one behaviour the planner reasons about. */
export function lbBehaviour(lb: LoadBalancerSpec, given: GivenPaths): LbBehaviour<LbModel> {
  const use = <M extends LbModel>(model: M, settings: SettingsOf<M>) => LB_VENDORS[model].behaviour(settings, given);
  return use(lb.model, lb);
}

/** What a vendor's rule reads, with the spec's LB block, of whichever vendor it is. */
export type VendorPlanContext = VendorRuleContext & { settings: LoadBalancerSpec };

function vendorRules<M extends LbModel>(model: M): Array<RuleOf<VendorPlanContext>> {
  return LB_VENDORS[model].findings.map((rule) => ({
    id: rule.id,
    severity: rule.severity,
    field: rule.field,
    // The model says whose block it is: a rule only ever reads its own vendor's settings.
    check: (ctx) => (ctx.settings.model === model ? rule.check(ctx, ctx.settings as SettingsOf<M>) : undefined),
  }));
}

/** Every vendor's traps, in the registry's order; each stands only for a plan of its own vendor. */
export const VENDOR_RULES: ReadonlyArray<RuleOf<VendorPlanContext>> = LB_MODELS.flatMap((model) => vendorRules(model));

/** The vendor's own advice for the general findings, as spec edits. */
export function vendorFixes(lb: LoadBalancerSpec): { gracefulAlternative: Fix[]; refusedConnectionsFix: Fix[] } {
  const use = <M extends LbModel>(model: M, settings: SettingsOf<M>) => ({
    gracefulAlternative: LB_VENDORS[model].fixes.gracefulAlternative(settings),
    refusedConnectionsFix: LB_VENDORS[model].fixes.refusedConnectionsFix(settings),
  });
  return use(lb.model, lb);
}

/** The vendor's own words for the general findings' advice. */
export function vendorTexts(model: LbModel): VendorTexts {
  return LB_VENDORS[model].texts;
}
