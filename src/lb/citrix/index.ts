import type { LbVendor } from '../vendor';
import { citrixBehaviour } from './behaviour';
import { citrixFindings } from './findings';
import { renderCitrix } from './lb-config';
import { citrixSchema, type CitrixLb } from './schema';
import { citrixTexts } from './texts';

export const citrix: LbVendor<CitrixLb> = {
  schema: citrixSchema,
  behaviour: citrixBehaviour,
  lbConfig: renderCitrix,
  texts: citrixTexts,
  findings: citrixFindings,
};
