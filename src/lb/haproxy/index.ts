import type { LbVendor } from '../../model/lb-vendor';
import { haproxyBehaviour } from './behaviour';
import { haproxyFindings } from './findings';
import { renderHaproxy } from './lb-config';
import { haproxySchema, type HaproxyLb } from './schema';
import { haproxyFixes, haproxyTexts } from './texts';

export const haproxy: LbVendor<HaproxyLb> = {
  schema: haproxySchema,
  behaviour: haproxyBehaviour,
  lbConfig: renderHaproxy,
  texts: haproxyTexts,
  fixes: haproxyFixes,
  findings: haproxyFindings,
};
