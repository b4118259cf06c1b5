/**
 * `gracegate argocd generate`, run by argocd-cmp-server in the app directory: the parameters read
 * and every path they name checked in the repository, the spec planned, the app rendered (helm
 * template of a chart, or a rendered file), the pod changes put in by the path that post-renders
 * them, the result written, all within one deadline under Argo CD's own.
 */
import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { MANIFESTS_MAX_BYTES } from '../../core/bounded-read';
import { GracegateError } from '../../core/errors';
import type { FailOn } from '../../model/finding';
import { readInputFile } from '../../core/read-input';
import type { DeliveredChanges, PostRenderRequest } from '../path';
import { parseLabelSelector, TargetRule } from '../target';
import { deadlineSeconds, startDeadline, type Deadline } from './deadline';
import { helmTemplate, helmTemplateArgs } from './helm';
import { ArgoCdParameterError, HELM_RELEASE_NAME, HELM_RELEASE_NAME_MAX, readArgoCdInputs, type ArgoCdInputs } from './params';
import { chartOf, HELM_INPUT_LIMITS, inRepo, repoOf, valuesFile, type Repo } from './repo-paths';

/** What generate is given by the command that runs it. */
export type GenerateTools = {
  /** Argo CD's environment (ARGOCD_*, PARAM_*, the operator's GRACEGATE_*). */
  env: NodeJS.ProcessEnv;
  /** The app directory argocd-cmp-server runs the command in. */
  cwd: string;
  /** The helm binary; asked for only when a chart is rendered. */
  helm(): string;
  /** The spec planned into its pod changes; throws when a finding reaches fail-on. */
  plan(spec: string, options: { failOn: FailOn; image?: string }): DeliveredChanges;
  /** The rendered stream with the pod changes in it (src/delivery/registry.ts: the path that post-renders them). */
  postRender(text: string, loaded: DeliveredChanges, request: PostRenderRequest): string;
  /** The manifests, on stdout: the last step, inside the deadline. */
  write(text: string): void;
  log(line: string): void;
};

/** The command, as the deadline's message names it. */
const COMMAND = 'gracegate argocd generate';

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

function render(inputs: ArgoCdInputs, sources: Sources, named: Named, deadline: Deadline, tools: GenerateTools): { text: string; source: string } {
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
    helm: tools.helm(),
    args,
    chart: chart.ref,
    env: tools.env,
    log: tools.log,
    deadline: deadline.at,
    step: (name) => deadline.step(name),
  });
  return { text, source: `helm template ${chart.ref}` };
}

function generateWithin(deadline: Deadline, tools: GenerateTools): void {
  deadline.step('reading the parameters');
  const inputs = readArgoCdInputs(tools.env);
  const app = inputs.app.name ?? '(no ARGOCD_APP_NAME)';
  const chosen =
    inputs.targetName !== undefined
      ? TargetRule.name(inputs.targetName)
      : inputs.targetSelector !== undefined
        ? TargetRule.labels(parseLabelSelector(inputs.targetSelector))
        : undefined;
  deadline.step('checking the paths');
  const sources = sourcesOf(inputs, repoOf(tools.env, tools.cwd), tools.env);
  deadline.step('planning the spec');
  const loaded = tools.plan(sources.spec, { failOn: inputs.failOn, ...(inputs.image !== undefined ? { image: inputs.image } : {}) });
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
    tools.log(`application ${inputs.app.name}: release named '${named.name}' after the spec's metadata.name`);
  }
  const { text, source } = render(inputs, sources, named, deadline, tools);
  deadline.step('post-render');
  tools.write(tools.postRender(text, loaded, { target: chosen, keepReplicas: inputs.keepReplicas, source }));
}

/** Generates the app's manifests within the deadline (GRACEGATE_TIMEOUT), writing them with `tools.write`. */
export function generate(tools: GenerateTools): void {
  const deadline = startDeadline(deadlineSeconds(tools.env), STEPS, COMMAND);
  try {
    generateWithin(deadline, tools);
  } finally {
    deadline.stop();
  }
}
