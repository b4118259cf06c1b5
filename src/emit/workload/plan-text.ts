import type { Derived } from '../../model/derived';
import type { Finding } from '../../model/finding';
import type { ShutdownTimeoutSetting, WorkloadPlan } from '../../plan/workload/plan-workload';
import { WORKLOAD_TIMING_ORDER } from '../../plan/workload/timings';

function inputsText(d: Derived): string {
  return Object.entries(d.inputs)
    .map(([name, i]) => `${name}=${i.value} (${i.source})`)
    .join('; ');
}

/** What gracegate does about the app's shutdown timeout, in one line. */
export function shutdownTimeoutText(s: ShutdownTimeoutSetting): string {
  switch (s.via) {
    case 'env':
      return `env ${s.name}=${s.value} (set by gracegate)`;
    case 'flag':
      return `flag ${s.name}=${s.value} (set by gracegate in args)`;
    case 'fixed':
      return `the app's own ${s.seconds}s (spec.app.shutdownTimeout, not settable)`;
    case 'unknown':
      return 'unknown and not settable (see the findings)';
    case 'none':
      return 'none: the app exits at SIGTERM';
  }
}

/** The preStop as it goes into the pod, in one line. */
export function preStopText(plan: WorkloadPlan): string {
  const p = plan.preStop;
  if (p.action === 'none') return 'none';
  return p.action === 'sleep' ? `sleep ${p.seconds}s (the kubelet's sleep action)` : `exec sleep ${p.seconds} (in the container)`;
}

export function findingLines(findings: readonly Finding[]): string[] {
  const lines = [findings.length === 0 ? 'findings   none' : 'findings'];
  for (const f of findings) {
    lines.push(`  ${f.severity.padEnd(7)} ${f.id} (${f.field}): ${f.message}`);
    lines.push(`          fix: ${f.remediation}`);
    if (f.evidence) lines.push(`          measured: ${f.evidence}`);
  }
  return lines;
}

/** A workload's plan for people: short, aligned, every number followed by where it came from. */
export function renderWorkloadPlanText(plan: WorkloadPlan): string {
  const w = plan.workload;
  const lines = [
    `workload   ${w.namespace}/${w.name} (${w.kind}${w.container ? `, container ${w.container}` : ''}), ${plan.replicas} replicas`,
    `network    ${plan.trafficPath.via}: no new connection reaches a deleted pod after ${plan.timings.propagationDelaySeconds}s`,
    `preStop    ${preStopText(plan)}; ${plan.preStop.reason}`,
    `shutdown   ${shutdownTimeoutText(plan.shutdownTimeout)}`,
    '',
    'timings',
  ];
  const width = Math.max(...WORKLOAD_TIMING_ORDER.map((k) => k.length));
  for (const k of WORKLOAD_TIMING_ORDER) {
    const d = plan.derivations[k];
    lines.push(`  ${k.padEnd(width)}  ${`${d.value}s`.padStart(6)}  = ${d.formula}`);
    lines.push(`  ${''.padEnd(width)}          ${inputsText(d)}`);
  }
  const r = plan.rollout;
  const strategy = w.kind === 'Deployment' ? `maxSurge ${r.maxSurge}, maxUnavailable ${r.maxUnavailable}` : 'one pod at a time, in place';
  lines.push(
    '',
    `rollout    ${strategy}, anti-affinity ${r.antiAffinity}, PDB ${r.pdbMaxUnavailable === null ? 'none' : `maxUnavailable ${r.pdbMaxUnavailable}`} (${r.reason})`,
  );
  lines.push('', ...findingLines(plan.findings));
  return `${lines.join('\n')}\n`;
}
