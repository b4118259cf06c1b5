import { argocdGenerate, argocdOverride } from '../delivery/registry';
import { findTool } from './find-tool';
import { loadChangesOfSpec, PlanRefusedError, reportRefused } from './load-pod-changes';
import { runParsedCommand, UsageError } from './args';

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
                    'gracegate synth --fail-on' (default: the operator's GRACEGATE_FAIL_ON, else
                    error); an Application may make it stricter, never looser than the operator's
  target-name, target-selector, image: as for gracegate post-render
Scalar parameters can also come from the Application's plugin env as GRACEGATE_<NAME>
(ARGOCD_ENV_GRACEGATE_CHART, ...). Also read: ARGOCD_APP_NAME (logs), ARGOCD_APP_NAMESPACE (helm
--namespace; must equal the spec's metadata.namespace), KUBE_VERSION (helm --kube-version),
ARGOCD_APP_SOURCE_PATH (the app directory in the repository: its root is where paths must stay).
Every parameter is checked before anything runs: a path must resolve (links followed) to a file or
directory inside the repository; a path of another kind, a URL, or a value of the wrong type or
size is refused naming the parameter (docs/delivery.md, "The plugin's threat model").
Set by the operator on the plugin's sidecar: GRACEGATE_FAIL_ON (the loosest fail-on an
Application may ask for, default error), GRACEGATE_VALUES_FILE_SCHEMES (URL schemes a values
file may use, e.g. https; none by default), GRACEGATE_ALLOWED_CHARTS (chart references allowed
besides directories in the repository, comma-separated), GRACEGATE_HELM (else helm on PATH),
GRACEGATE_HELM_TIMEOUT (all helm calls together, default 45s) and GRACEGATE_TIMEOUT (the whole
command, default 50s), inside Argo CD's 60 s repo-server timeout; raise them with it. A chart's
missing dependencies are built first (helm dependency build), with HELM_CACHE_HOME,
HELM_CONFIG_HOME and HELM_DATA_HOME in a temporary directory unless set.
`;

function log(line: string): void {
  process.stderr.write(`gracegate argocd: ${line}\n`);
}

async function generate(): Promise<number> {
  try {
    argocdGenerate({
      env: process.env,
      cwd: process.cwd(),
      helm: () => findTool('helm', 'GRACEGATE_HELM'),
      plan: (spec, options) => loadChangesOfSpec(spec, { log, ...options }),
      write: (text) => process.stdout.write(text),
      log,
    });
    return 0;
  } catch (err) {
    if (err instanceof PlanRefusedError) return reportRefused('argocd generate', err, argocdOverride(process.env));
    throw err;
  }
}

export async function run(args: string[]): Promise<number> {
  return runParsedCommand(USAGE, args, {}, true, async ({ positionals }) => {
    if (positionals.length !== 1 || positionals[0] !== 'generate') throw new UsageError("expected 'gracegate argocd generate'");
    return generate();
  });
}
