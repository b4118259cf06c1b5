import { GracegateError } from '../core/errors';
import type { FailOn, Finding } from '../model/finding';
import { planGateway } from '../plan/plan-gateway';
import { podChanges, type PodChanges } from '../pod';
import type { WorkloadChanges } from '../pod/workload/pod-changes';
import { loadAnySpecFile, loadSpecFile } from './load-spec-file';
import { blockedBy } from './synth-findings';

type LoadOptions = {
  image?: string;
  log: (line: string) => void;
  /** Findings at or above this refuse the spec, as `gracegate synth --fail-on` does. @default error */
  failOn?: FailOn;
};

/** A plan gracegate calls wrong reaches no cluster: the findings at or above --fail-on, worded; nothing is rendered. */
export class PlanRefusedError extends GracegateError {}

/**
 * The findings at or above `failOn` refuse the spec, exactly as synth refuses it (nothing is
 * rendered; the commands exit 1). With --fail-on none, error findings are still repeated on stderr,
 * which helm and Argo CD show only when the command fails, and CI logs always.
 */
function checkFindings(specPath: string, findings: readonly Finding[], options: LoadOptions): void {
  const blocked = blockedBy(specPath, findings, options.failOn ?? 'error');
  if (blocked !== undefined) throw new PlanRefusedError(blocked);
  for (const f of findings.filter((x) => x.severity === 'error')) {
    options.log(`warning: ${specPath}: ${f.field}: ${f.message} (${f.id}; see 'gracegate plan ${specPath}')`);
  }
}

function located<T>(specPath: string, make: () => T): T {
  try {
    return make();
  } catch (err) {
    if (err instanceof GracegateError) throw err.locate(specPath);
    throw err;
  }
}

function gatewayChanges(specPath: string, resolved: ReturnType<typeof loadSpecFile>, options: LoadOptions): PodChanges {
  const plan = planGateway(resolved);
  checkFindings(specPath, plan.findings, options);
  const changes = located(specPath, () => podChanges(plan, options.image !== undefined ? { image: options.image } : {}));
  // A rendered stream cannot label the namespace it installs into: say what it needs.
  const labels = Object.entries(changes.namespaceLabels).map(([k, v]) => `${k}=${v}`);
  if (labels.length > 0) options.log(`note: label the namespace: kubectl label namespace ${changes.gateway.namespace} ${labels.join(' ')}`);
  return changes;
}

/** Spec file → plan → pod changes for a gateway spec (the post-render benchmark). */
export function loadPodChanges(specPath: string, options: LoadOptions): PodChanges {
  return gatewayChanges(specPath, loadSpecFile(specPath), options);
}

/** Spec file of either kind → plan → its pod changes, for post-render and argocd. */
export function loadChangesOfSpec(
  specPath: string,
  options: LoadOptions,
): { kind: 'GracefulGateway'; changes: PodChanges } | { kind: 'GracefulWorkload'; changes: WorkloadChanges } {
  const spec = loadAnySpecFile(specPath);
  if (spec.kind === 'GracefulGateway') return { kind: spec.kind, changes: gatewayChanges(specPath, spec.resolved, options) };
  // The workload planner is loaded only for a workload spec: a gateway's post-render starts faster.
  const { planWorkload } = require('../plan/workload/plan-workload') as typeof import('../plan/workload/plan-workload');
  const { workloadChanges } = require('../pod/workload/pod-changes') as typeof import('../pod/workload/pod-changes');
  const plan = planWorkload(spec.resolved);
  checkFindings(specPath, plan.findings, options);
  return { kind: spec.kind, changes: located(specPath, () => workloadChanges(plan)) };
}

/**
 * What a command does with a refused plan: the findings and the way out on stderr, nothing on
 * stdout, exit 1 (as synth). `override` is how the command is told to deliver anyway; undefined
 * where its caller may not (an Argo CD tenant below the operator's GRACEGATE_FAIL_ON).
 */
export function reportRefused(command: string, err: PlanRefusedError, override: string | undefined): number {
  const way = override !== undefined ? `, or ${override} to write anyway` : " (the plugin's operator lets no Application deliver past them)";
  process.stderr.write(`${err.message}\ngracegate ${command}: nothing written; fix the finding(s) above${way}\n`);
  return 1;
}
