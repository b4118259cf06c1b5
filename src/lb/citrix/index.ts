import type { LbVendor } from '../../model/lb-vendor';
import { citrixBehaviour } from './behaviour';
import { citrixFindings } from './findings';
import { citrixSchema, type CitrixLb } from './schema';
import { citrixFixes, citrixTexts } from './texts';

export const citrix: LbVendor<CitrixLb> = {
  schema: citrixSchema,
  behaviour: citrixBehaviour,
  texts: citrixTexts,
  fixes: citrixFixes,
  findings: citrixFindings,
};
