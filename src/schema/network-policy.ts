import { isIPv4, isIPv6 } from '../core/ip';
import { z } from 'zod';
import { DNS_LABEL } from '../model/spec-fields';

/**
 * What the gateway pods' NetworkPolicy admits to the sidecar's ports (docs/hc.md, "Exposure"):
 * the LB's probes to the health port, Prometheus to the metrics port. The witness port admits
 * nobody but the pod's own node (the kubelet's hooks and probes), which a NetworkPolicy always
 * allows; every other port stays as open as without the policy.
 */

/** Why `text` is not a CIDR NetworkPolicy takes (ipBlock.cidr), or undefined when it is one. */
export function cidrProblem(text: string): string | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return `'${text}' is not a CIDR: write an address with its prefix length, e.g. ${isIPv6(text) ? `${text}/128` : `${text}/32`}`;
  const address = text.slice(0, slash);
  const prefixText = text.slice(slash + 1);
  const v4 = isIPv4(address);
  if (!v4 && !isIPv6(address)) return `'${text}' is not a CIDR: '${address}' is not an IPv4 or IPv6 address`;
  const bits = v4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > bits) return `'${text}' is not a CIDR: the prefix length must be 0 to ${bits}`;
  const prefix = Number(prefixText);
  const value = v4 ? ipv4Value(address) : ipv6Value(address);
  const host = (1n << BigInt(bits - prefix)) - 1n;
  if ((value & host) !== 0n) {
    return `'${text}' has bits set past its prefix /${prefix}: write ${formatNetwork(value & ~host, v4)}/${prefix} (or the address as /${bits})`;
  }
  return undefined;
}

function ipv4Value(a: string): bigint {
  return a.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function ipv6Value(a: string): bigint {
  let text = a;
  const v4Tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4Tail) {
    const v = ipv4Value(v4Tail[1]!);
    text = `${text.slice(0, -v4Tail[1]!.length)}${(v >> 16n).toString(16)}:${(v & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headParts = head ? head.split(':') : [];
  const tailParts = tail ? tail.split(':') : [];
  const parts = tail === undefined ? headParts : [...headParts, ...Array<string>(8 - headParts.length - tailParts.length).fill('0'), ...tailParts];
  return parts.reduce((acc, part) => (acc << 16n) | BigInt(Number.parseInt(part, 16)), 0n);
}

function formatNetwork(value: bigint, v4: boolean): string {
  if (v4) return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => ((value >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}

const cidr = z.string().superRefine((text, ctx) => {
  const problem = cidrProblem(text);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

const namespaceName = z.string().regex(DNS_LABEL, 'must be a namespace name (a DNS label: lower case, digits, -)').max(63);

export const networkPolicySchema = z.strictObject({
  /** `false`: synth writes no NetworkPolicy (yours already closes the sidecar's ports). @default true */
  enabled: z.boolean().default(true).describe("write the NetworkPolicy for the sidecar's ports; default true"),
  /**
   * The addresses the LB's health probes come from, as CIDRs (NetScaler SNIP, F5 self IPs, the NLB's
   * subnets, HAProxy's hosts). Only they (and the node) reach the health port. Omitted: unknown, so
   * the health port stays open to every source (finding network-policy-lb-sources-unknown) while the
   * witness and metrics ports are still closed.
   */
  lbSourceRanges: z
    .array(cidr)
    .min(1, 'list at least one CIDR, or omit the field while the LB source is unknown')
    .optional()
    .describe("CIDRs the LB's health probes come from; omitted: unknown, the health port stays open to every source"),
  /** An LB running in the cluster (exposure clusterIP, an in-mesh Envoy): the namespaces of its pods. */
  lbNamespaces: z.array(namespaceName).default([]).describe("namespaces of an in-cluster LB's pods (exposure clusterIP)"),
  /** Who scrapes the metrics port. */
  metrics: z
    .strictObject({
      /** Namespaces whose pods may scrape /metrics. @default [monitoring] */
      namespaces: z.array(namespaceName).default(['monitoring']).describe("namespaces whose pods scrape the sidecar's /metrics; default [monitoring]"),
      /** A Prometheus outside the cluster (or on the host network): its addresses, as CIDRs. */
      sourceRanges: z.array(cidr).default([]).describe('CIDRs of a Prometheus outside the pod network; default none'),
    })
    .prefault({}),
});
