import { existsSync } from 'node:fs';
import { MANIFESTS_MAX_BYTES } from '../core/bounded-read';
import { helmTemplate } from './argocd-helm';
import { ArgoCdParameterError, readArgoCdInputs, type ArgoCdInputs } from './argocd-params';
import { findTool } from './find-tool';
import { loadChangesOfSpec } from './load-pod-changes';
import { postRender } from '../post-render/post-render';
import { postRenderWorkload } from '../post-render/workload/post-render';
import { parseLabelSelector, TargetRule } from '../post-render/target';
import { GracegateError } from '../core/errors';
import { runParsedCommand, UsageError } from './args';
import { readInputFile } from './read-input';

const USAGE = `usage: gracegate argocd generate

Argo CD config management plugin (CMP v2), run by argocd-cmp-server in the app directory.
Renders the app (a local chart with helm template, or a rendered file) and post-renders it with
the spec (a GracefulGateway or a GracefulWorkload), printing manifests only on stdout; logs go to stderr.

Plugin parameters (Application spec.source.plugin.parameters; ARGOCD_APP_PARAMETERS / PARAM_*):
  spec              the GracefulGateway or GracefulWorkload spec (default gracegate.yaml)
  chart             a local chart directory, rendered with helm template (default: the app
                    directory itself when it holds a Chart.yaml)
  values-files      (array) values files for the chart, in order
  set               (map) --set values for the chart
  rendered          a file of rendered manifests, instead of a chart
  release-name      Helm release name (default: the spec's metadata.name)
  target-name, target-selector, image: as for gracegate post-render
Scalar parameters can also come from the Application's plugin env as GRACEGATE_<NAME>
(ARGOCD_ENV_GRACEGATE_CHART, ...). Also read: ARGOCD_APP_NAME (logs), ARGOCD_APP_NAMESPACE (helm
--namespace; must equal the spec's metadata.namespace), KUBE_VERSION (helm --kube-version).
helm: GRACEGATE_HELM, else helm on PATH. A chart's missing dependencies are built first (helm
dependency build), with HELM_CACHE_HOME, HELM_CONFIG_HOME and HELM_DATA_HOME in a temporary
directory unless set. All helm calls together get GRACEGATE_HELM_TIMEOUT (default 45s), inside Argo
CD's 60 s repo-server timeout; raise both together (docs/delivery.md).
`;

function log(line: string): void {
  process.stderr.write(`gracegate argocd: ${line}\n`);
}

/** The object the spec is about, whichever its kind: the release is named after it and installs into its namespace. */
type Named = { name: string; namespace: string };

function render(inputs: ArgoCdInputs, changes: Named): { text: string; source: string } {
  const chart = inputs.chart ?? (inputs.rendered === undefined && existsSync('Chart.yaml') ? '.' : undefined);
  if (inputs.rendered !== undefined && inputs.chart !== undefined) throw new GracegateError("give the 'chart' or the 'rendered' parameter, not both");
  if (inputs.rendered !== undefined) {
    return { text: readInputFile(inputs.rendered, MANIFESTS_MAX_BYTES, `rendered file ${inputs.rendered}`), source: inputs.rendered };
  }
  if (chart === undefined) {
    throw new GracegateError(
      "nothing to render: set the 'chart' parameter (a local chart) or 'rendered' (a manifests file), or put a Chart.yaml in the app directory",
    );
  }
  const release = inputs.releaseName ?? changes.name;
  const namespace = inputs.app.namespace ?? changes.namespace;
  const args = ['template', release, chart, '--namespace', namespace];
  if (inputs.app.kubeVersion) args.push('--kube-version', inputs.app.kubeVersion);
  for (const file of inputs.valuesFiles) args.push('--values', file);
  for (const [key, value] of Object.entries(inputs.set)) args.push('--set', `${key}=${value}`);
  const text = helmTemplate({ helm: findTool('helm', 'GRACEGATE_HELM'), args, chart, env: process.env, log });
  return { text, source: `helm template ${chart}` };
}

async function generate(): Promise<number> {
  const inputs = readArgoCdInputs(process.env);
  const app = inputs.app.name ?? '(no ARGOCD_APP_NAME)';
  const loaded = loadChangesOfSpec(inputs.spec, { log, ...(inputs.image !== undefined ? { image: inputs.image } : {}) });
  const named: Named = loaded.kind === 'GracefulGateway' ? loaded.changes.gateway : loaded.changes.workload;
  if (inputs.app.namespace !== undefined && inputs.app.namespace !== named.namespace) {
    throw new GracegateError(
      `application ${app} deploys to namespace '${inputs.app.namespace}' but ${inputs.spec} has metadata.namespace '${named.namespace}'; make them equal`,
    );
  }
  if (inputs.app.name !== undefined && inputs.releaseName === undefined && inputs.app.name !== named.name) {
    log(`application ${inputs.app.name}: release named '${named.name}' after the spec's metadata.name`);
  }
  const chosen =
    inputs.targetName !== undefined
      ? TargetRule.name(inputs.targetName)
      : inputs.targetSelector !== undefined
        ? TargetRule.labels(parseLabelSelector(inputs.targetSelector))
        : undefined;
  const { text, source } = render(inputs, named);
  if (loaded.kind === 'GracefulGateway') {
    if (inputs.keepReplicas) {
      throw new ArgoCdParameterError(
        `plugin parameter 'keep-replicas' is gone for gateways: describe the HPA in the spec (spec.autoscaling {minReplicas, maxReplicas}); the chart's HPA is then kept and no replicas are set`,
      );
    }
    process.stdout.write(postRender(text, loaded.changes, { target: chosen ?? TargetRule.container(loaded.changes.proxy.containerName), source }));
  } else {
    process.stdout.write(
      postRenderWorkload(text, loaded.changes, { target: chosen ?? TargetRule.name(named.name), keepReplicas: inputs.keepReplicas, source }),
    );
  }
  return 0;
}

export async function run(args: string[]): Promise<number> {
  return runParsedCommand(USAGE, args, {}, true, async ({ positionals }) => {
    if (positionals.length !== 1 || positionals[0] !== 'generate') throw new UsageError("expected 'gracegate argocd generate'");
    return generate();
  });
}
