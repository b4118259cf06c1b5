/**
 * Every delivery path, keyed by name: what synth and the CLI read. A path is a folder of
 * src/delivery/ (docs/architecture.md, "A delivery path"); nothing outside src/delivery/ imports
 * one: the commands reach each through the functions below, the library through library.ts.
 */
import { argocdPath } from './argocd';
import type { GenerateTools } from './argocd/generate';
import { cdk8sPath } from './cdk8s';
import { gatewayApiPath } from './gateway-api';
import { postRenderGatewayApi } from './gateway-api/post-render';
import { helmValuesPath } from './helm-values';
import { kustomizePath } from './kustomize';
import { manifestsYaml, workloadManifestsYaml } from './manifests';
import type { DeliveredChanges, DeliveryPath, DeliveryPathName, PostRenderRequest, SynthPart, SynthRequest } from './path';
import { postRenderPath } from './post-render';
import { postRender } from './post-render/post-render';
import { TargetRule } from './target';

export type { DeliveredChanges, DeliveryPath, DeliveryPathName, PostRenderRequest, SynthPart, SynthRequest } from './path';

export const DELIVERY_PATHS: { readonly [N in DeliveryPathName]: DeliveryPath<N> } = {
  'helm-values': helmValuesPath,
  'post-render': postRenderPath,
  kustomize: kustomizePath,
  'gateway-api': gatewayApiPath,
  cdk8s: cdk8sPath,
  argocd: argocdPath,
};

/**
 * `gracegate synth`'s delivery files: every path's part for the request, and manifests.yaml (the
 * objects beside the pod, kubectl apply -f) unless the path that delivers the pod writes its own.
 * Two paths never write the same file.
 */
export function synthFiles(request: SynthRequest): SynthPart {
  const out: SynthPart = { files: {} };
  for (const path of Object.values(DELIVERY_PATHS)) {
    const part = path.synth?.(request) ?? null;
    if (part === null) continue;
    const twice = Object.keys(part.files).filter((f) => f in out.files);
    if (twice.length > 0) throw new Error(`delivery path ${path.name} writes ${twice.join(', ')}, which another path wrote`);
    Object.assign(out.files, part.files);
    if (part.note !== undefined) out.note = part.note;
  }
  out.files['manifests.yaml'] ??= request.kind === 'GracefulGateway' ? manifestsYaml(request.changes) : workloadManifestsYaml(request.changes);
  return out;
}

/**
 * `gracegate post-render` and the Argo CD plugin: the pod changes put into a rendered stream by the
 * path that delivers them there: a Gateway API gateway's Gateway (gateway-api), a chart's
 * Deployment or a workload (post-render). The target is the kind's default unless one is given.
 */
export function postRenderStream(text: string, loaded: DeliveredChanges, request: PostRenderRequest): string {
  const source = request.source ?? 'stdin';
  if (loaded.kind === 'GracefulGateway') {
    const changes = loaded.changes;
    if (changes.gatewayApi) return postRenderGatewayApi(text, changes, source);
    return postRender(text, changes, { target: request.target ?? TargetRule.container(changes.proxy.containerName), source });
  }
  // The workload's post-renderer is loaded only for a workload spec: a gateway's post-render starts faster.
  const { postRenderWorkload } = require('./post-render/workload') as typeof import('./post-render/workload');
  return postRenderWorkload(text, loaded.changes, {
    target: request.target ?? TargetRule.name(loaded.changes.workload.name),
    keepReplicas: request.keepReplicas === true,
    source,
  });
}

/**
 * `gracegate argocd generate`: the Argo CD path, post-rendering through postRenderStream. Its code
 * is loaded here, not with the registry: `gracegate post-render` starts without it.
 */
export function argocdGenerate(tools: Omit<GenerateTools, 'postRender'>): void {
  const { generate } = require('./argocd/generate') as typeof import('./argocd/generate');
  generate({ ...tools, postRender: postRenderStream });
}

/** What `argocd generate` tells an Application whose plan is refused: fix the finding, or (where the operator allows it) the way past it. */
export function argocdOverride(env: NodeJS.ProcessEnv): string | undefined {
  const { tenantMayIgnoreFindings } = require('./argocd/params') as typeof import('./argocd/params');
  return tenantMayIgnoreFindings(env) ? "set the plugin parameter 'fail-on' to none" : undefined;
}
