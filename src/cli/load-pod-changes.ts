import { GracegateError } from '../core/errors';
import type { Finding } from '../model/finding';
import { planGateway } from '../plan/plan-gateway';
import { podChanges, type PodChanges } from '../pod';
import type { WorkloadChanges } from '../pod/workload/pod-changes';
import { loadAnySpecFile, loadSpecFile } from './load-spec-file';

type LoadOptions = { image?: string; log: (line: string) => void };

/**
 * Error findings do not stop delivery (`gracegate plan` is where they fail a build) but are repeated
 * on stderr, which is shown by helm and by Argo CD only when the command fails, and in CI logs always.
 */
function warnErrors(specPath: string, findings: readonly Finding[], log: (line: string) => void): void {
  for (const f of findings.filter((x) => x.severity === 'error')) {
    log(`warning: ${specPath}: ${f.field}: ${f.message} (${f.id}; see 'gracegate plan ${specPath}')`);
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
  warnErrors(specPath, plan.findings, options.log);
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
  warnErrors(specPath, plan.findings, options.log);
  return { kind: spec.kind, changes: located(specPath, () => workloadChanges(plan)) };
}
