import type { z } from 'zod';
import type { Fix } from '../core/fix';
import type { Sequence } from '../contract/hc';
import type { GivenPaths } from './derived';
import type { RuleOf } from './finding';
import type { LbBehaviour } from './lb-behaviour';

/**
 * One LB vendor as planning sees it, all in its own folder (`src/lb/<model>/`): what a spec may say
 * about it, what the planner concludes from that, and the vendor's own words in the advice the plan
 * gives. What the LB team must configure is rendered from a finished plan (`src/lb-config/<model>.ts`).
 * Adding a vendor is adding a folder and a file, and their lines in the two registries.
 */
export type LbVendor<S extends { model: string }> = {
  /** The spec block: strict, the vendor's documented defaults, its own cross-field rules. */
  schema: z.ZodType<S>;
  /** What the planner needs to know about this LB, each number with its derivation. */
  behaviour(lb: S, given: GivenPaths): LbBehaviour<S['model']>;
  /** The vendor's fields in the general findings' advice. */
  texts: VendorTexts;
  /** The same advice as spec edits, for the findings' machine-applicable fixes. */
  fixes: VendorFixes<S>;
  /** Traps only this vendor has, one rule per finding id. */
  findings: ReadonlyArray<VendorRule<S>>;
};

/** What a vendor's rule reads of the plan: the LB's behaviour, the chosen sequence and the timings it needs. */
export type VendorRuleContext = {
  lb: LbBehaviour;
  sequence: Sequence;
  timings: { readonly minReadySeconds: number; readonly sequenceSeconds: number };
};

/** A trap only this vendor has: one rule per finding id, given the vendor's own narrowed LB block. */
export type VendorRule<S> = RuleOf<VendorRuleContext, [S]>;

export type VendorTexts = {
  /** How this LB stops choosing a pod without a flush: its graceful signal, or not cutting on DOWN. */
  gracefulAlternative: string;
  /** What to change when drain-first would lose the connections the draining pod refuses. */
  refusedConnectionsFix: string;
  /** What to change so that no connection carries a request to the pod after drain-first's drain. */
  connectionReuseFix: string;
};

/** `texts` as spec edits (src/core/fix.ts), alternatives in the texts' order; from the vendor's own settings. */
export type VendorFixes<S> = {
  gracefulAlternative(lb: S): Fix[];
  refusedConnectionsFix(lb: S): Fix[];
};
