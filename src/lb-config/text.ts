import type { Plan } from '../plan/plan-gateway';
import { lossText } from '../plan/order-choice';
import { PATHS } from '../contract/hc';
import type { HealthSpec } from '../schema/gateway-spec';

/**
 * What every vendor emitter gets: the plan (what the termination assumes of the LB, and the
 * vendor's own values it was planned from), and where the LB should send traffic and probes.
 */
export type LbConfigInput = {
  plan: Plan;
  /** Name of the backend / pool / service group. @default the gateway's name. */
  backendName?: string;
  /** Backends; an empty list prints a placeholder the LB team fills in. */
  servers?: ServerAddress[];
};

export type ServerAddress = {
  host: string;
  /** Traffic port (the gateway's node port or pod port). */
  port: number;
  /** Probe port when it differs from the spec's health port (one per server, e.g. on loopback). */
  checkPort?: number;
};

/** Path the LB probes: the sidecar's LB endpoint, never `/health` (readiness) (docs/facts.md §1). */
export const LB_HEALTH_PATH = PATHS.lb;

/**
 * The port the LB's probe reaches the sidecar on: the health NodePort, the host port, or the pod
 * port (ClusterIP: in-cluster LBs and NLB ip targets probe the pod IP). `undefined`: Kubernetes
 * allocates the NodePort, so the LB team must read it from the Service.
 */
export function healthProbePort(h: HealthSpec): number | undefined {
  switch (h.exposure) {
    case 'nodePort':
      return h.nodePort;
    case 'hostPort':
      return h.hostPort ?? h.port;
    case 'clusterIP':
      return h.port;
  }
}

export function backendName(input: LbConfigInput): string {
  return input.backendName ?? input.plan.gateway.name;
}

/** One config line and why the plan needs it. */
export type Line = { text: string; why: string };

/** Lines with trailing comments aligned (`#` comments end of line: HAProxy, YAML). */
export function withTrailingComments(lines: Line[], indent = ''): string[] {
  const width = Math.max(0, ...lines.filter((l) => l.text !== '').map((l) => l.text.length));
  return lines.map((l) => (l.text === '' ? `${indent}# ${l.why}` : `${indent}${l.text.padEnd(width)}  # ${l.why}`));
}

/** Lines each preceded by a comment line (CLIs without end-of-line comments: NetScaler, tmsh). */
export function withLeadingComments(lines: Line[]): string[] {
  return lines.flatMap((l) => (l.text === '' ? [`# ${l.why}`] : [`# ${l.why}`, l.text]));
}

/** The header every vendor output starts with: what this is for, and the findings standing against it. */
export function header(vendor: string, input: LbConfigInput): string[] {
  const { plan } = input;
  const out = [
    `# gracegate lb-config: ${vendor} settings for gateway ${plan.gateway.namespace}/${plan.gateway.name}`,
    `# plan: ${plan.sequence}; LB detects a failing probe in ${plan.loadBalancer.lbDetectSeconds}s; drain timeout ${plan.timings.drainTimeoutSeconds}s`,
    `# expected requests lost per pod termination (${plan.traffic.requestsPerSecondPerPod} requests/s per pod, ${plan.traffic.requestDurations}): ${plan.orders
      .map((o) => `${o.order === plan.sequence ? '*' : ''}${o.order} ${o.runnable ? lossText(o.expected) : 'not runnable'}`)
      .join(', ')}`,
    '# Every line says which plan assumption it serves. Change a value here only together with the spec, then re-run gracegate plan.',
  ];
  for (const f of plan.findings.filter((x) => x.field.startsWith('spec.loadBalancer'))) {
    out.push(`# ${f.severity.toUpperCase()} ${f.id}: ${f.message}`);
    out.push(`#   fix: ${f.remediation}`);
    if (f.evidence) out.push(`#   measured: ${f.evidence}`);
  }
  return out;
}

/**
 * A plan timing as the plan derived it (`interval x retries = 15s`), so an LB-config comment quotes
 * the planner's formula instead of restating it.
 */
export function planned(plan: Plan, timing: keyof Plan['derivations']): string {
  const d = plan.derivations[timing];
  return `${d.formula} = ${d.value}s`;
}
