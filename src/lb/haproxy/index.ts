import type { LbVendor } from '../../model/lb-vendor';
import { haproxyBehaviour } from './behaviour';
import { haproxyFindings } from './findings';
import { haproxySchema, type HaproxyLb } from './schema';
import { haproxyFixes, haproxyTexts } from './texts';

export const haproxy: LbVendor<HaproxyLb> = {
  schema: haproxySchema,
  behaviour: haproxyBehaviour,
  texts: haproxyTexts,
  fixes: haproxyFixes,
  findings: haproxyFindings,
};
