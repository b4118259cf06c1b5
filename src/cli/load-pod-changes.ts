import { GracegateError } from '../errors';
import { planGateway } from '../plan/plan-gateway';
import { podChanges, type PodChanges } from '../pod';
import { loadSpecFile } from './load-spec-file';

/**
 * Spec file → plan → pod changes, for the delivery commands (post-render, argocd). Error findings
 * do not stop delivery (`gracegate plan` is where they fail a build) but are repeated on stderr,
 * which is shown by helm and by Argo CD only when the command fails, and in CI logs always.
 */
export function loadPodChanges(specPath: string, options: { image?: string; log: (line: string) => void }): PodChanges {
  const resolved = loadSpecFile(specPath);
  const plan = planGateway(resolved);
  for (const f of plan.findings.filter((x) => x.severity === 'error')) {
    options.log(`warning: ${specPath}: ${f.field}: ${f.message} (${f.id}; see 'gracegate plan ${specPath}')`);
  }
  let changes: PodChanges;
  try {
    changes = podChanges(plan, options.image !== undefined ? { image: options.image } : {});
  } catch (err) {
    if (err instanceof GracegateError) throw err.locate(specPath);
    throw err;
  }
  // A rendered stream cannot label the namespace it installs into: say what it needs.
  const labels = Object.entries(changes.namespaceLabels).map(([k, v]) => `${k}=${v}`);
  if (labels.length > 0) options.log(`note: label the namespace: kubectl label namespace ${changes.gateway.namespace} ${labels.join(' ')}`);
  return changes;
}
