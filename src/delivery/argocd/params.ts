/**
 * The Argo CD config management plugin's inputs (CMP v2, docs/delivery.md "Argo CD"): plugin
 * parameters from `ARGOCD_APP_PARAMETERS` (JSON) or, failing that, `PARAM_<NAME>`; then Application
 * env entries `ARGOCD_ENV_GRACEGATE_<NAME>` as fallbacks for the scalar ones. Pure: takes the
 * environment.
 *
 * Whoever writes an Application controls all of these (docs/delivery.md, "The plugin's threat
 * model"), so each is data, checked here before anything runs: its type and size, and the rule of
 * what it names (a release name against helm's own rule, a `--set` key against helm's key grammar).
 * Paths are checked against the repository in repo-paths.ts. A value that breaks a rule is an
 * ArgoCdParameterError naming the parameter (exit 2), never a stack trace.
 */
import { GracegateError } from '../../core/errors';
import { FAIL_ON_VALUES, failOnStrictness, type FailOn } from '../../model/finding';

export type ArgoCdInputs = {
  /** The GracefulGateway spec, relative to the app directory. @default gracegate.yaml */
  spec: string;
  /** A local chart (relative to the app directory) rendered with `helm template`, or a chart the operator allows by name. */
  chart?: string;
  /** Values files for the chart, relative to the app directory, in order. */
  valuesFiles: string[];
  /** `--set-string` values for the chart, keys checked against helm's key grammar. */
  set: Record<string, string>;
  /** A file of already rendered manifests, instead of a chart. */
  rendered?: string;
  /** Helm release name, by helm's own rule. @default - the spec's metadata.name (gracegate's selectors assume it) */
  releaseName?: string;
  targetName?: string;
  targetSelector?: string;
  image?: string;
  /** GracefulWorkload specs only: leave the replica count to an HPA ('true'). A gateway spec describes its HPA in spec.autoscaling. */
  keepReplicas: boolean;
  /** Plan findings at or above this level refuse the render, as `gracegate synth --fail-on`. @default error */
  failOn: FailOn;
  app: { name?: string; namespace?: string; kubeVersion?: string };
};

/** A parameter of the wrong kind or value; the message names it. */
export class ArgoCdParameterError extends GracegateError {}

type Parameter = { name: string; string?: unknown; array?: unknown; map?: unknown };

const SCALARS = ['spec', 'chart', 'rendered', 'release-name', 'target-name', 'target-selector', 'image', 'keep-replicas', 'fail-on'] as const;
type Scalar = (typeof SCALARS)[number];
const KNOWN = new Set<string>([...SCALARS, 'values-files', 'set']);

/**
 * The sizes a tenant's parameters may have: far above what a real Application writes (a path, a
 * name, a few `--set` values), far below what could cost memory or time (the whole JSON list is
 * read before any of it is checked).
 */
export const PARAMETER_LIMITS = {
  /** ARGOCD_APP_PARAMETERS as a whole (Linux passes at most 128 KiB in one environment variable). */
  jsonBytes: 64 * 1024,
  /** Any one string: a path (PATH_MAX is 4096), a name, a selector, an image. */
  stringChars: 4096,
  valuesFiles: 64,
  setEntries: 512,
  setKeyChars: 512,
  /** A `--set` value: a certificate or a small JSON blob fits. */
  setValueChars: 32 * 1024,
} as const;

/**
 * The operator's level (the plugin sidecar's own environment, which no tenant reaches): the loosest
 * `fail-on` an Application may ask for (and its default where stricter than 'error'). An Application
 * can only make it stricter,
 * so that in a shared Argo CD no tenant turns off the refusal of a plan gracegate calls wrong.
 */
export const FAIL_ON_ENV = 'GRACEGATE_FAIL_ON';

const stricterThan = (floor: FailOn): string =>
  FAIL_ON_VALUES.filter((v) => failOnStrictness(v) >= failOnStrictness(floor))
    .sort((a, b) => failOnStrictness(a) - failOnStrictness(b))
    .join(', ');

function operatorFailOn(env: NodeJS.ProcessEnv): FailOn {
  const v = env[FAIL_ON_ENV];
  if (v === undefined || v === '') return 'error';
  if (!(FAIL_ON_VALUES as readonly string[]).includes(v)) {
    throw new ArgoCdParameterError(`${FAIL_ON_ENV} on the plugin's sidecar must be one of ${FAIL_ON_VALUES.join(', ')}, got '${text(v, FAIL_ON_ENV, 16)}'`);
  }
  return v as FailOn;
}

/** Whether the operator lets an Application deliver a plan whatever its findings. */
export function tenantMayIgnoreFindings(env: NodeJS.ProcessEnv): boolean {
  return operatorFailOn(env) === 'none';
}

/** Argo CD's env name for a parameter: upper case, anything but letters and digits as `_`. */
function envName(name: string): string {
  return name.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

const describeJson = (v: unknown): string => (Array.isArray(v) ? 'a list' : v === null ? 'null' : typeof v === 'object' ? 'an object' : `a ${typeof v}`);

/**
 * A string a tenant gave: a string, within `maxChars`, without NUL (which no exec argument or path can
 * carry) and, unless `multiline`, without any other control character (no name or path holds one).
 */
function text(value: unknown, what: string, maxChars: number = PARAMETER_LIMITS.stringChars, multiline = false): string {
  if (typeof value !== 'string') throw new ArgoCdParameterError(`${what} must be a string, got ${describeJson(value)}`);
  if (value.length > maxChars) throw new ArgoCdParameterError(`${what} is ${value.length} characters long; at most ${maxChars}`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  const bad = multiline ? /\0/.exec(value) : /[\0-\x1f\x7f]/.exec(value);
  if (bad)
    throw new ArgoCdParameterError(
      `${what} holds the control character U+${bad[0].charCodeAt(0).toString(16).padStart(4, '0')}; no ${multiline ? 'value' : 'name or path'} has one`,
    );
  return value;
}

function fromJson(json: string): Parameter[] {
  if (Buffer.byteLength(json) > PARAMETER_LIMITS.jsonBytes) {
    throw new ArgoCdParameterError(
      `ARGOCD_APP_PARAMETERS is larger than ${PARAMETER_LIMITS.jsonBytes / 1024} KiB, the most gracegate reads of plugin parameters`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (err) {
    throw new ArgoCdParameterError(`ARGOCD_APP_PARAMETERS is not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new ArgoCdParameterError('ARGOCD_APP_PARAMETERS must be a JSON list of parameters');
  parsed.forEach((p, i) => {
    if (typeof p !== 'object' || p === null || Array.isArray(p) || typeof (p as { name?: unknown }).name !== 'string') {
      throw new ArgoCdParameterError(`ARGOCD_APP_PARAMETERS[${i}] must be an object with a 'name' (required)`);
    }
    text((p as Parameter).name, `ARGOCD_APP_PARAMETERS[${i}].name`, 64);
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
  for (let i = 0; env[`PARAM_VALUES_FILES_${i}`] !== undefined && i <= PARAMETER_LIMITS.valuesFiles; i++) files.push(env[`PARAM_VALUES_FILES_${i}`]!);
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

/**
 * helm's rule for a release name (helm/helm pkg/chart/v2/util/validate_name.go, the same in 3.17
 * pkg/chartutil): a DNS-1123 subdomain of at most 53 characters. Checked here, before helm runs,
 * so that no name can be read as a flag.
 */
export const HELM_RELEASE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const HELM_RELEASE_NAME_MAX = 53;

/** A Kubernetes object name (DNS-1123 subdomain, at most 253): what target-name names. */
const OBJECT_NAME = HELM_RELEASE_NAME;

/**
 * A `--set` key as helm's strvals parser reads it (helm/helm pkg/strvals/parser.go): names joined by
 * `.`, each name followed by list indexes `[n]`; a `\` escapes the next character (`\.` for a dot
 * in an annotation key). `,`, `=`, `{` and `}` end or open something in that grammar, so a key never
 * holds them unescaped: a key that did could set further keys.
 */
const SET_KEY_NAME = String.raw`(?:[A-Za-z0-9_\-/]|\\[.\\\[\]A-Za-z0-9_\-/])+(?:\[\d{1,5}\])*`;
const SET_KEY = new RegExp(`^${SET_KEY_NAME}(?:\\.${SET_KEY_NAME})*$`);

/** An image reference: registry, path, tag and digest characters only. */
const IMAGE = /^[A-Za-z0-9][A-Za-z0-9._\-/:@+]*$/;

/** `value` when it follows `rule` within `max` characters; else an error naming `what` (the parameter) and the rule. */
function checked(what: string, value: string, rule: RegExp, max: number, rulesText: string): string {
  if (value.length > max || !rule.test(value)) throw new ArgoCdParameterError(`${what} is ${JSON.stringify(value.slice(0, 100))}, not ${rulesText}`);
  return value;
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
  const scalar = (name: Scalar): string | undefined => {
    const p = byName.get(name);
    if (p !== undefined) {
      const v = text(p.string, `plugin parameter '${name}'`);
      return v === '' ? undefined : v;
    }
    const fromEnv = `ARGOCD_ENV_GRACEGATE_${envName(name)}`;
    const v = env[fromEnv] === undefined ? undefined : text(env[fromEnv], fromEnv);
    return v === undefined || v === '' ? undefined : v;
  };

  const filesParam = byName.get('values-files');
  let valuesFiles: string[] = [];
  if (filesParam !== undefined) {
    if (!Array.isArray(filesParam.array))
      throw new ArgoCdParameterError(`plugin parameter 'values-files' must be a list of strings, got ${describeJson(filesParam.array)}`);
    if (filesParam.array.length > PARAMETER_LIMITS.valuesFiles) {
      throw new ArgoCdParameterError(`plugin parameter 'values-files' lists ${filesParam.array.length} files; at most ${PARAMETER_LIMITS.valuesFiles}`);
    }
    valuesFiles = filesParam.array.map((f, i) => text(f, `plugin parameter 'values-files'[${i}]`));
  }

  const setParam = byName.get('set');
  const set: Record<string, string> = {};
  if (setParam !== undefined) {
    const map = setParam.map;
    if (typeof map !== 'object' || map === null || Array.isArray(map))
      throw new ArgoCdParameterError(`plugin parameter 'set' must be a map of strings, got ${describeJson(map)}`);
    const entries = Object.entries(map);
    if (entries.length > PARAMETER_LIMITS.setEntries) {
      throw new ArgoCdParameterError(`plugin parameter 'set' has ${entries.length} entries; at most ${PARAMETER_LIMITS.setEntries}`);
    }
    for (const [key, value] of entries) {
      const k = text(key, `plugin parameter 'set' key '${key.slice(0, 40)}'`, PARAMETER_LIMITS.setKeyChars);
      if (!SET_KEY.test(k)) {
        throw new ArgoCdParameterError(
          `plugin parameter 'set' key '${k}' is not a helm value path (names of letters, digits, '_', '-' and '/' joined by '.', with list indexes [n]; escape a literal dot as '\\.')`,
        );
      }
      set[k] = text(value, `plugin parameter 'set' value of '${k}'`, PARAMETER_LIMITS.setValueChars, true);
    }
  }

  // For a workload only: a gateway describes its HPA in the spec (spec.autoscaling), and the
  // command refuses 'true' for one. 'false', the value older plugin announcements defaulted to,
  // means nothing.
  const keep = scalar('keep-replicas');
  if (keep !== undefined && keep !== 'true' && keep !== 'false')
    throw new ArgoCdParameterError(`plugin parameter 'keep-replicas' must be true or false, got '${keep}'`);
  const floor = operatorFailOn(env);
  // The default is 'error', or the operator's level where it is stricter.
  const failOn = scalar('fail-on') ?? (failOnStrictness(floor) > failOnStrictness('error') ? floor : 'error');
  if (!(FAIL_ON_VALUES as readonly string[]).includes(failOn)) {
    throw new ArgoCdParameterError(`plugin parameter 'fail-on' must be one of ${FAIL_ON_VALUES.join(', ')}, got '${failOn}'`);
  }
  if (failOnStrictness(failOn as FailOn) < failOnStrictness(floor)) {
    throw new ArgoCdParameterError(
      `plugin parameter 'fail-on' is '${failOn}', looser than the operator's ${FAIL_ON_ENV}=${floor}; an Application may only make it stricter (${stricterThan(floor)})`,
    );
  }
  const release = scalar('release-name');
  const target = scalar('target-name');
  const image = scalar('image');
  const optional = (key: keyof ArgoCdInputs, value: string | undefined) => (value !== undefined ? { [key]: value } : {});
  return {
    spec: scalar('spec') ?? 'gracegate.yaml',
    ...optional('chart', scalar('chart')),
    valuesFiles,
    set,
    ...optional('rendered', scalar('rendered')),
    ...optional(
      'releaseName',
      release &&
        checked(
          "plugin parameter 'release-name'",
          release,
          HELM_RELEASE_NAME,
          HELM_RELEASE_NAME_MAX,
          `a helm release name (lower-case letters, digits, '-' and '.', at most ${HELM_RELEASE_NAME_MAX})`,
        ),
    ),
    ...optional('targetName', target && checked("plugin parameter 'target-name'", target, OBJECT_NAME, 253, 'a Kubernetes object name')),
    ...optional('targetSelector', scalar('target-selector')),
    ...optional('image', image && checked("plugin parameter 'image'", image, IMAGE, 512, 'an image reference')),
    keepReplicas: keep === 'true',
    failOn: failOn as FailOn,
    app: {
      ...(env.ARGOCD_APP_NAME ? { name: text(env.ARGOCD_APP_NAME, 'ARGOCD_APP_NAME', 253) } : {}),
      ...(env.ARGOCD_APP_NAMESPACE
        ? { namespace: checked('ARGOCD_APP_NAMESPACE', env.ARGOCD_APP_NAMESPACE, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 63, 'a namespace name') }
        : {}),
      ...(env.KUBE_VERSION
        ? { kubeVersion: checked('KUBE_VERSION', env.KUBE_VERSION, /^v?\d+\.\d+(\.\d+)?([-+][0-9A-Za-z.+-]*)?$/, 64, 'a Kubernetes version') }
        : {}),
    },
  };
}
