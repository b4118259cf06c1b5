/** Who may call the witness port: the node's addresses as the pod learns them, and the config's own. */
import { isIP } from '../core/ip';
import { z } from 'zod';

/** The hc container's environment variable the pod changes fill from the downward API's `status.hostIPs`. */
export const HOST_IPS_ENV = 'GRACEGATE_HOST_IPS';

/** null when `text` is an IP address or CIDR block Node's BlockList takes, else why it is not. */
export function addressOrBlockProblem(text: string): string | null {
  const [address, prefix, ...rest] = text.split('/');
  if (rest.length > 0 || address === undefined || isIP(address) === 0) return `'${text}' is not an IP address or CIDR block`;
  if (prefix === undefined) return null;
  const max = isIP(address) === 4 ? 32 : 128;
  return /^\d+$/.test(prefix) && Number(prefix) <= max ? null : `'${text}': the prefix length must be 0-${max}`;
}

/**
 * A list of addresses or CIDR blocks (the witness port's extra sources, the metrics scrapers), at
 * most 64: each entry checked by addressOrBlockProblem, whose words the error carries.
 */
export const addressOrBlockList = z
  .array(
    z.string().superRefine((text, ctx) => {
      const problem = addressOrBlockProblem(text);
      if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
    }),
  )
  .max(64);
