/**
 * The Argo CD config management plugin's inputs (CMP v2, docs/facts.md §7): plugin parameters from
 * `ARGOCD_APP_PARAMETERS` (JSON) or, failing that, `PARAM_<NAME>`; then Application env entries
 * `ARGOCD_ENV_GRACEGATE_<NAME>` as fallbacks for the scalar ones. Pure: takes the environment.
 */
import { GracegateError } from '../core/errors';

export type ArgoCdInputs = {
  /** The GracefulGateway spec, relative to the app directory. @default gracegate.yaml */
  spec: string;
  /** A local chart (relative to the app directory) rendered with `helm template`. */
  chart?: string;
  /** Values files for the chart, relative to the app directory, in order. */
  valuesFiles: string[];
  /** `--set` values for the chart. */
  set: Record<string, string>;
  /** A file of already rendered manifests, instead of a chart. */
  rendered?: string;
  /** Helm release name. @default - the spec's metadata.name (gracegate's selectors assume it) */
  releaseName?: string;
  targetName?: string;
  targetSelector?: string;
  image?: string;
  /** GracefulWorkload specs only: leave the replica count to an HPA ('true'). A gateway spec describes its HPA in spec.autoscaling. */
  keepReplicas: boolean;
  app: { name?: string; namespace?: string; kubeVersion?: string };
};

/** A parameter of the wrong kind or value; the message names it. */
export class ArgoCdParameterError extends GracegateError {}

type Parameter = { name: string; string?: string; array?: string[]; map?: Record<string, string> };

const SCALARS = ['spec', 'chart', 'rendered', 'release-name', 'target-name', 'target-selector', 'image', 'keep-replicas'] as const;
const KNOWN = new Set<string>([...SCALARS, 'values-files', 'set']);

/** Argo CD's env name for a parameter: upper case, anything but letters and digits as `_`. */
function envName(name: string): string {
  return name.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

function fromJson(text: string): Parameter[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ArgoCdParameterError(`ARGOCD_APP_PARAMETERS is not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new ArgoCdParameterError('ARGOCD_APP_PARAMETERS must be a JSON list of parameters');
  parsed.forEach((p, i) => {
    if (typeof p !== 'object' || p === null || typeof (p as { name?: unknown }).name !== 'string') {
      throw new ArgoCdParameterError(`ARGOCD_APP_PARAMETERS[${i}] must be an object with a 'name' (required)`);
    }
  });
  return parsed as Parameter[];
}

/** The same parameters read back from PARAM_<NAME>, PARAM_<NAME>_<i> and PARAM_<NAME>_<KEY>. */
function fromParamEnv(env: NodeJS.ProcessEnv): Parameter[] {
  const out: Parameter[] = [];
  for (const name of SCALARS) {
    const v = env[`PARAM_${envName(name)}`];
    if (v !== undefined) out.push({ name, string: v });
  }
  const files: string[] = [];
  for (let i = 0; env[`PARAM_VALUES_FILES_${i}`] !== undefined; i++) files.push(env[`PARAM_VALUES_FILES_${i}`]!);
  if (files.length > 0) out.push({ name: 'values-files', array: files });
  // Map keys come upper-cased in env names, so --set keys only round-trip through the JSON form.
  return out;
}

/**
 * The parameters as Argo CD passes them. The repo-server JSON-encodes the Application's
 * `plugin.parameters` list with Go's json.Marshal, which writes an empty (nil) list as `null`, so an
 * Application with `plugin: {name: …}` or `plugin: {}` and no parameters arrives as
 * `ARGOCD_APP_PARAMETERS=null`; without a `plugin` block (discovery alone) the variable is not set
 * at all (argoproj/argo-cd pkg/apis/application/v1alpha1/types.go,
 * ApplicationSourcePluginParameters.Environ; reposerver/repository/repository.go, getPluginParamEnvs).
 * Both mean "no parameters"; PARAM_* (set by Argo CD beside the JSON) is read only then.
 */
function parameters(env: NodeJS.ProcessEnv): Parameter[] {
  const json = env.ARGOCD_APP_PARAMETERS?.trim();
  if (json === undefined || json === '' || json === 'null') return fromParamEnv(env);
  return fromJson(json);
}

export function readArgoCdInputs(env: NodeJS.ProcessEnv): ArgoCdInputs {
  const params = parameters(env);
  const unknown = params.filter((p) => !KNOWN.has(p.name)).map((p) => p.name);
  if (unknown.length > 0) {
    throw new ArgoCdParameterError(
      `unknown plugin parameter${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `'${n}'`).join(', ')}; known: ${[...KNOWN].join(', ')}`,
    );
  }
  const byName = new Map(params.map((p) => [p.name, p]));
  const scalar = (name: (typeof SCALARS)[number]): string | undefined => {
    const p = byName.get(name);
    if (p !== undefined) {
      if (typeof p.string !== 'string') throw new ArgoCdParameterError(`plugin parameter '${name}' must be a string`);
      return p.string === '' ? undefined : p.string;
    }
    const v = env[`ARGOCD_ENV_GRACEGATE_${envName(name)}`];
    return v === undefined || v === '' ? undefined : v;
  };
  const files = byName.get('values-files');
  if (files !== undefined && !Array.isArray(files.array)) throw new ArgoCdParameterError("plugin parameter 'values-files' must be an array");
  const set = byName.get('set');
  if (set !== undefined && (typeof set.map !== 'object' || set.map === null)) throw new ArgoCdParameterError("plugin parameter 'set' must be a map");
  // For a workload only: a gateway describes its HPA in the spec (spec.autoscaling), and the
  // command refuses 'true' for one. 'false', the value older plugin announcements defaulted to,
  // means nothing.
  const keep = scalar('keep-replicas');
  if (keep !== undefined && keep !== 'true' && keep !== 'false')
    throw new ArgoCdParameterError(`plugin parameter 'keep-replicas' must be true or false, got '${keep}'`);
  const optional = (key: keyof ArgoCdInputs, value: string | undefined) => (value !== undefined ? { [key]: value } : {});
  return {
    spec: scalar('spec') ?? 'gracegate.yaml',
    ...optional('chart', scalar('chart')),
    valuesFiles: files?.array ?? [],
    set: set?.map ?? {},
    ...optional('rendered', scalar('rendered')),
    ...optional('releaseName', scalar('release-name')),
    ...optional('targetName', scalar('target-name')),
    ...optional('targetSelector', scalar('target-selector')),
    ...optional('image', scalar('image')),
    keepReplicas: keep === 'true',
    app: {
      ...(env.ARGOCD_APP_NAME ? { name: env.ARGOCD_APP_NAME } : {}),
      ...(env.ARGOCD_APP_NAMESPACE ? { namespace: env.ARGOCD_APP_NAMESPACE } : {}),
      ...(env.KUBE_VERSION ? { kubeVersion: env.KUBE_VERSION } : {}),
    },
  };
}
