import type { LbVendor } from '../../model/lb-vendor';
import { f5Behaviour } from './behaviour';
import { f5Findings } from './findings';
import { f5Schema, type F5Lb } from './schema';
import { f5Fixes, f5Texts } from './texts';

export const f5: LbVendor<F5Lb> = {
  schema: f5Schema,
  behaviour: f5Behaviour,
  texts: f5Texts,
  fixes: f5Fixes,
  findings: f5Findings,
};
