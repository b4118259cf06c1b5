import type { LbVendor } from '../../model/lb-vendor';
import { nlbBehaviour } from './behaviour';
import { nlbFindings } from './findings';
import { nlbSchema, type NlbLb } from './schema';
import { nlbFixes, nlbTexts } from './texts';

export const nlb: LbVendor<NlbLb> = {
  schema: nlbSchema,
  behaviour: nlbBehaviour,
  texts: nlbTexts,
  fixes: nlbFixes,
  findings: nlbFindings,
};
