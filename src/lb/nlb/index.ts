import type { LbVendor } from '../../model/lb-vendor';
import { nlbBehaviour } from './behaviour';
import { nlbFindings } from './findings';
import { renderNlb } from './lb-config';
import { nlbSchema, type NlbLb } from './schema';
import { nlbNamespaceLabels, nlbServiceAnnotations } from './service-annotations';
import { nlbFixes, nlbTexts } from './texts';

export const nlb: LbVendor<NlbLb> = {
  schema: nlbSchema,
  behaviour: nlbBehaviour,
  lbConfig: renderNlb,
  texts: nlbTexts,
  fixes: nlbFixes,
  findings: nlbFindings,
  serviceAnnotations: nlbServiceAnnotations,
  namespaceLabels: nlbNamespaceLabels,
};
