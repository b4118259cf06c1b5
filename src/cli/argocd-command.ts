import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { MANIFESTS_MAX_BYTES } from '../core/bounded-read';
import { deadlineSeconds, startDeadline, type Deadline } from './argocd-deadline';
import { helmTemplate, helmTemplateArgs } from './argocd-helm';
import { ArgoCdParameterError, HELM_RELEASE_NAME, HELM_RELEASE_NAME_MAX, readArgoCdInputs, type ArgoCdInputs } from './argocd-params';
import { chartOf, HELM_INPUT_LIMITS, inRepo, repoOf, valuesFile, type Repo } from './argocd-paths';
import { findTool } from './find-tool';
import { loadChangesOfSpec, PlanRefusedError, reportRefused } from './load-pod-changes';
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
  chart             a chart directory in the repository, rendered with helm template (default: the
                    app directory itself when it holds a Chart.yaml), or a chart the operator allows
  values-files      (array) values files in the repository for the chart, in order
  set               (map) values for the chart, passed as --set-string (a value is a string; give
                    other types in a values file)
  rendered          a file of rendered manifests in the repository, instead of a chart
  release-name      Helm release name, by helm's rule (default: the spec's metadata.name)
  fail-on           error|warning|info|none: plan findings at or above it refuse the render, as
                    'gracegate synth --fail-on' (default error)
  target-name, target-selector, image: as for gracegate post-render
Scalar parameters can also come from the Application's plugin env as GRACEGATE_<NAME>
(ARGOCD_ENV_GRACEGATE_CHART, ...). Also read: ARGOCD_APP_NAME (logs), ARGOCD_APP_NAMESPACE (helm
--namespace; must equal the spec's metadata.namespace), KUBE_VERSION (helm --kube-version),
ARGOCD_APP_SOURCE_PATH (the app directory in the repository: its root is where paths must stay).
Every parameter is checked before anything runs: a path must resolve (links followed) to a file or
directory inside the repository; a path of another kind, a URL, or a value of the wrong type or
size is refused naming the parameter (docs/delivery.md, "The plugin's threat model").
Set by the operator on the plugin's sidecar: GRACEGATE_VALUES_FILE_SCHEMES (URL schemes a values
file may use, e.g. https; none by default), GRACEGATE_ALLOWED_CHARTS (chart references allowed
besides directories in the repository, comma-separated), GRACEGATE_HELM (else helm on PATH),
GRACEGATE_HELM_TIMEOUT (all helm calls together, default 45s) and GRACEGATE_TIMEOUT (the whole
command, default 50s), inside Argo CD's 60 s repo-server timeout; raise them with it. A chart's
missing dependencies are built first (helm dependency build), with HELM_CACHE_HOME,
HELM_CONFIG_HOME and HELM_DATA_HOME in a temporary directory unless set.
`;

const COMMAND = 'gracegate argocd generate';

function log(line: string): void {
  process.stderr.write(`gracegate argocd: ${line}\n`);
}

/** Every step the deadline can name. */
const STEPS = [
  'reading the parameters',
  'checking the paths',
  'planning the spec',
  'reading the rendered file',
  'helm template',
  'helm dependency build',
  'post-render',
];

/** The object the spec is about, whichever its kind: the release is named after it and installs into its namespace. */
type Named = { name: string; namespace: string };

/** What the parameters name, each path checked in the repository and given relative to the app directory. */
type Sources = { spec: string; rendered?: string; chart?: { ref: string; local: boolean }; valuesFiles: string[] };

/** A checked path as gracegate reads it and names it in messages: relative to the app directory. */
const shown = (repo: Repo, real: string): string => relative(repo.app, real) || '.';

/** The same as an argument for helm: never starting with '-' (`./-x.yaml`). */
const asArg = (repo: Repo, real: string): string => {
  const path = shown(repo, real);
  return path.startsWith('.') ? path : `.${sep}${path}`;
};

/** Every path the parameters name, checked before anything is read or run. */
function sourcesOf(inputs: ArgoCdInputs, repo: Repo, env: NodeJS.ProcessEnv): Sources {
  if (inputs.rendered !== undefined && inputs.chart !== undefined) throw new ArgoCdParameterError("give the 'chart' or the 'rendered' parameter, not both");
  const spec = shown(repo, inRepo(repo, "plugin parameter 'spec'", inputs.spec, 'file'));
  if (inputs.rendered !== undefined)
    return { spec, rendered: shown(repo, inRepo(repo, "plugin parameter 'rendered'", inputs.rendered, 'file')), valuesFiles: [] };
  const given = inputs.chart ?? (existsSync(join(repo.app, 'Chart.yaml')) ? '.' : undefined);
  if (given === undefined) {
    throw new ArgoCdParameterError(
      "nothing to render: set the 'chart' parameter (a local chart) or 'rendered' (a manifests file), or put a Chart.yaml in the app directory",
    );
  }
  const chart = chartOf(repo, env, given);
  let bytes = chart.valuesBytes;
  const valuesFiles = inputs.valuesFiles.map((file, i) => {
    const v = valuesFile(repo, env, `plugin parameter 'values-files'[${i}]`, file);
    bytes += v.bytes;
    return v.remote ? v.path : asArg(repo, v.path);
  });
  if (bytes > HELM_INPUT_LIMITS.valuesBytes) {
    throw new ArgoCdParameterError(
      `the values files and the chart's values.yaml hold ${bytes} bytes together; helm may parse at most ${HELM_INPUT_LIMITS.valuesBytes / (1024 * 1024)} MiB of values for one render`,
    );
  }
  return { spec, chart: { ref: chart.local ? asArg(repo, chart.chart) : chart.chart, local: chart.local }, valuesFiles };
}

function render(inputs: ArgoCdInputs, sources: Sources, named: Named, deadline: Deadline): { text: string; source: string } {
  if (sources.rendered !== undefined) {
    deadline.step('reading the rendered file');
    return { text: readInputFile(sources.rendered, MANIFESTS_MAX_BYTES, `rendered file ${sources.rendered}`), source: sources.rendered };
  }
  const chart = sources.chart!;
  const release = inputs.releaseName ?? named.name;
  if (release.length > HELM_RELEASE_NAME_MAX || !HELM_RELEASE_NAME.test(release)) {
    throw new ArgoCdParameterError(
      `the release is named after the spec's metadata.name '${release}', which is not a helm release name (at most ${HELM_RELEASE_NAME_MAX} characters); set the plugin parameter 'release-name'`,
    );
  }
  const args = helmTemplateArgs({
    release,
    chart: chart.ref,
    namespace: inputs.app.namespace ?? named.namespace,
    ...(inputs.app.kubeVersion ? { kubeVersion: inputs.app.kubeVersion } : {}),
    valuesFiles: sources.valuesFiles,
    set: inputs.set,
  });
  const text = helmTemplate({
    helm: findTool('helm', 'GRACEGATE_HELM'),
    args,
    chart: chart.ref,
    env: process.env,
    log,
    deadline: deadline.at,
    step: (name) => deadline.step(name),
  });
  return { text, source: `helm template ${chart.ref}` };
}

function generateWithin(deadline: Deadline): number {
  deadline.step('reading the parameters');
  const inputs = readArgoCdInputs(process.env);
  const app = inputs.app.name ?? '(no ARGOCD_APP_NAME)';
  const chosen =
    inputs.targetName !== undefined
      ? TargetRule.name(inputs.targetName)
      : inputs.targetSelector !== undefined
        ? TargetRule.labels(parseLabelSelector(inputs.targetSelector))
        : undefined;
  deadline.step('checking the paths');
  const sources = sourcesOf(inputs, repoOf(process.env, process.cwd()), process.env);
  deadline.step('planning the spec');
  const loaded = loadChangesOfSpec(sources.spec, { log, failOn: inputs.failOn, ...(inputs.image !== undefined ? { image: inputs.image } : {}) });
  const named: Named = loaded.kind === 'GracefulGateway' ? loaded.changes.gateway : loaded.changes.workload;
  if (inputs.app.namespace !== undefined && inputs.app.namespace !== named.namespace) {
    throw new GracegateError(
      `application ${app} deploys to namespace '${inputs.app.namespace}' but ${sources.spec} has metadata.namespace '${named.namespace}'; make them equal`,
    );
  }
  if (loaded.kind === 'GracefulGateway' && inputs.keepReplicas) {
    throw new ArgoCdParameterError(
      `plugin parameter 'keep-replicas' is gone for gateways: describe the HPA in the spec (spec.autoscaling {minReplicas, maxReplicas}); the chart's HPA is then kept and no replicas are set`,
    );
  }
  if (inputs.app.name !== undefined && inputs.releaseName === undefined && inputs.app.name !== named.name) {
    log(`application ${inputs.app.name}: release named '${named.name}' after the spec's metadata.name`);
  }
  const { text, source } = render(inputs, sources, named, deadline);
  deadline.step('post-render');
  const out =
    loaded.kind === 'GracefulGateway'
      ? postRender(text, loaded.changes, { target: chosen ?? TargetRule.container(loaded.changes.proxy.containerName), source })
      : postRenderWorkload(text, loaded.changes, { target: chosen ?? TargetRule.name(named.name), keepReplicas: inputs.keepReplicas, source });
  process.stdout.write(out);
  return 0;
}

async function generate(): Promise<number> {
  const deadline = startDeadline(deadlineSeconds(process.env), STEPS, COMMAND);
  try {
    return generateWithin(deadline);
  } catch (err) {
    if (err instanceof PlanRefusedError) return reportRefused('argocd generate', err, "set the plugin parameter 'fail-on' to none");
    throw err;
  } finally {
    deadline.stop();
  }
}

export async function run(args: string[]): Promise<number> {
  return runParsedCommand(USAGE, args, {}, true, async ({ positionals }) => {
    if (positionals.length !== 1 || positionals[0] !== 'generate') throw new UsageError("expected 'gracegate argocd generate'");
    return generate();
  });
}
