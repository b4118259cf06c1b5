import type { LbVendor } from '../../model/lb-vendor';
import { envoyBehaviour } from './behaviour';
import { envoyFindings } from './findings';
import { envoySchema, type EnvoyLb } from './schema';
import { envoyFixes, envoyTexts } from './texts';

export const envoy: LbVendor<EnvoyLb> = {
  schema: envoySchema,
  behaviour: envoyBehaviour,
  texts: envoyTexts,
  fixes: envoyFixes,
  findings: envoyFindings,
};
