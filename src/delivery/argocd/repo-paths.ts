/**
 * Every path an Application names stays in its repository. argocd-cmp-server runs `generate` in
 * the app directory of a checkout of the Application's repository (cmpserver/plugin/plugin.go), so
 * the checkout's root is the app directory less `ARGOCD_APP_SOURCE_PATH`. A path is resolved the
 * way Argo CD resolves a Helm values file (argo-cd util/io/path/resolved.go,
 * ResolveValueFilePathOrUrl): relative to the app directory, or, when absolute, to the repository
 * root; then every symbolic link in it is followed (realpath: Argo CD follows only the last one)
 * and the result must lie inside the root. A URL is refused unless the operator allows its scheme,
 * as Argo CD's `helm.valuesFileSchemes` does.
 *
 * Where helm reads files itself (a chart directory), the whole tree is checked first: no link that
 * leaves the repository, nothing but files and directories, and a bounded size (helm reads a chart
 * into memory whole, following links: helm/helm pkg/chart/loader/directory.go, sympath.Walk).
 */
import { existsSync, lstatSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { SPEC_MAX_BYTES } from '../../core/bounded-read';
import { isObject } from '../../core/json';
import { yamlValue } from '../../core/yaml-input';
import { ArgoCdParameterError } from './params';
import { readInputFile } from '../../core/read-input';

/** The checkout and the app directory in it, both real paths. */
export type Repo = { root: string; app: string };

/**
 * What helm may read of a repository for one render: far above a gateway chart (tens of KiB) and
 * its values, and within the plugin sidecar's 512 MiB. helm 3.17 holds parsed values at up to about
 * 110 bytes a byte of YAML (measured: 2 MiB of `[0,0,…]` values, 235 MB resident; 8 MiB, 870 MB),
 * so the values (the files and the chart's own values.yaml) are bounded together; templates are
 * held as text.
 */
export const HELM_INPUT_LIMITS = {
  /** The values files and the chart's values.yaml together. */
  valuesBytes: 2 * 1024 * 1024,
  /** All the chart's files. */
  chartBytes: 8 * 1024 * 1024,
  /** Files and directories in a chart's tree. */
  chartEntries: 5000,
} as const;

/** Operator settings, from the plugin sidecar's own environment (a tenant's env entries arrive as ARGOCD_ENV_*). */
export const VALUES_SCHEMES_ENV = 'GRACEGATE_VALUES_FILE_SCHEMES';
export const ALLOWED_CHARTS_ENV = 'GRACEGATE_ALLOWED_CHARTS';

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;

function inside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function realpath(path: string, what: string, given: string): string {
  try {
    return realpathSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file in the repository'
        : code === 'ELOOP'
          ? 'a loop of symbolic links'
          : code === 'ENOTDIR'
            ? 'a part of the path is a file'
            : code;
    throw new ArgoCdParameterError(`${what} '${given}': ${why}`);
  }
}

/**
 * The checkout's root: the app directory with `ARGOCD_APP_SOURCE_PATH` (the Application's
 * spec.source.path, as the repo server passes it) taken off its end. Without that variable (run
 * by hand), the app directory itself is the root.
 */
export function repoOf(env: NodeJS.ProcessEnv, cwd: string): Repo {
  const app = realpath(cwd, 'the app directory', cwd);
  const source = env.ARGOCD_APP_SOURCE_PATH ?? '';
  const parts = source.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new ArgoCdParameterError(`ARGOCD_APP_SOURCE_PATH '${source}' leaves the repository ('..')`);
  const tail = app.split(sep).slice(-parts.length);
  if (parts.length > 0 && (tail.length !== parts.length || tail.some((p, i) => p !== parts[i]))) {
    throw new ArgoCdParameterError(
      `the app directory ${app} does not end with ARGOCD_APP_SOURCE_PATH '${source}', so the repository's root is not known; point the Application's path at a directory, not at a symbolic link`,
    );
  }
  const root = parts.length === 0 ? app : join(app, ...parts.map(() => '..'));
  return { root: realpath(root, 'the repository root', root), app };
}

type Kind = 'file' | 'directory';

function kindOf(s: Stats): Kind | undefined {
  return s.isFile() ? 'file' : s.isDirectory() ? 'directory' : undefined;
}

/**
 * A path a parameter names, resolved in the repository: its real path, which lies inside the
 * root and is a `kind` (a regular file or a directory); an ArgoCdParameterError naming the
 * parameter otherwise. A URL is refused here (see `valuesFile` for the one place one can pass).
 */
export function inRepo(repo: Repo, what: string, given: string, kind: Kind): string {
  const scheme = SCHEME.exec(given)?.[1];
  if (scheme !== undefined) throw new ArgoCdParameterError(`${what} '${given}': a URL (${scheme}:), where a path in the repository is expected`);
  const joined = isAbsolute(given) ? join(repo.root, given) : resolve(repo.app, given);
  const real = realpath(joined, what, given);
  if (!inside(real, repo.root)) {
    throw new ArgoCdParameterError(
      `${what} '${given}' resolves outside the repository${real !== resolve(joined) ? ' (through a symbolic link)' : ''}; name a path inside it`,
    );
  }
  const found = kindOf(statSync(real));
  if (found !== kind) {
    throw new ArgoCdParameterError(
      `${what} '${given}' is ${found ? `a ${found}` : 'neither a regular file nor a directory (a device, FIFO or socket)'}; a ${kind} is expected`,
    );
  }
  return real;
}

/** The operator's list in `name` (comma-separated), lower-cased where `lower`. */
function operatorList(env: NodeJS.ProcessEnv, name: string, lower: boolean): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((s) => (lower ? s.trim().toLowerCase() : s.trim()))
    .filter((s) => s !== '');
}

/** A values file: a file in the repository (its size counts against `valuesBytes`), or a URL whose scheme the operator allows (never file:). */
export function valuesFile(repo: Repo, env: NodeJS.ProcessEnv, what: string, given: string): { path: string; bytes: number; remote: boolean } {
  const scheme = SCHEME.exec(given)?.[1]?.toLowerCase();
  if (scheme !== undefined) {
    const allowed = operatorList(env, VALUES_SCHEMES_ENV, true).filter((s) => s !== 'file');
    if (!allowed.includes(scheme)) {
      throw new ArgoCdParameterError(
        `${what} '${given}': the URL scheme '${scheme}' is not allowed${allowed.length > 0 ? ` (allowed: ${allowed.join(', ')})` : ''}; the operator allows schemes with ${VALUES_SCHEMES_ENV} on the plugin's sidecar`,
      );
    }
    return { path: given, bytes: 0, remote: true };
  }
  const path = inRepo(repo, what, given, 'file');
  return { path, bytes: statSync(path).size, remote: false };
}

/** A chart: a name the operator allows (passed to helm as it is), or a chart directory in the repository, its tree checked. */
export function chartOf(repo: Repo, env: NodeJS.ProcessEnv, given: string): { chart: string; local: boolean; valuesBytes: number } {
  if (operatorList(env, ALLOWED_CHARTS_ENV, false).includes(given)) return { chart: given, local: false, valuesBytes: 0 };
  const what = "plugin parameter 'chart'";
  if (SCHEME.exec(given) && !isAbsolute(given)) {
    throw new ArgoCdParameterError(
      `${what} '${given}' is not a chart directory in the repository, nor a chart the operator allows (${ALLOWED_CHARTS_ENV} on the plugin's sidecar)`,
    );
  }
  const dir = inRepo(repo, what, given, 'directory');
  checkTree(repo, dir, given);
  checkLocalDependencies(repo, dir, given);
  const values = join(dir, 'values.yaml');
  return { chart: dir, local: true, valuesBytes: existsSync(values) ? statSync(values).size : 0 };
}

/**
 * `helm dependency build` copies a dependency whose repository is `file://<dir>` from that
 * directory, relative to the chart: it must be in the repository too. Other repositories are
 * fetched by helm as Argo CD's own Helm support fetches them.
 */
function checkLocalDependencies(repo: Repo, dir: string, given: string): void {
  for (const file of ['Chart.yaml', 'requirements.yaml']) {
    let text: string;
    try {
      text = readInputFile(join(dir, file), SPEC_MAX_BYTES);
    } catch {
      continue; // helm says what is wrong with a chart it cannot read
    }
    const read = yamlValue(text);
    const deps = 'value' in read && isObject(read.value) && Array.isArray(read.value.dependencies) ? read.value.dependencies : [];
    for (const dep of deps) {
      const repository = isObject(dep) && typeof dep.repository === 'string' ? dep.repository : '';
      if (!repository.startsWith('file://')) continue;
      const target = realpath(resolve(dir, repository.slice('file://'.length)), `the chart '${given}': ${file}: dependency`, repository);
      if (!inside(target, repo.root)) throw new ArgoCdParameterError(`the chart '${given}': ${file}: dependency '${repository}' is outside the repository`);
    }
  }
}

/**
 * Walks a chart directory as helm will read it, following links as helm does: every link must
 * stay in the repository, every entry be a file or a directory, and the tree be bounded. Returns
 * the bytes of its files.
 */
function checkTree(repo: Repo, dir: string, given: string): number {
  const what = `the chart '${given}'`;
  let entries = 0;
  let bytes = 0;
  const seen = new Set<string>();
  const walk = (real: string, shown: string): void => {
    if (seen.has(real)) throw new ArgoCdParameterError(`${what}: ${shown} links back to a directory above it`);
    seen.add(real);
    for (const name of readdirSync(real)) {
      if (++entries > HELM_INPUT_LIMITS.chartEntries)
        throw new ArgoCdParameterError(`${what} has more than ${HELM_INPUT_LIMITS.chartEntries} files and directories`);
      const path = join(real, name);
      const at = `${shown}/${name}`;
      let target = path;
      let s = lstatSync(path);
      if (s.isSymbolicLink()) {
        target = realpath(path, what, at);
        if (!inside(target, repo.root)) throw new ArgoCdParameterError(`${what}: ${at} is a symbolic link that leaves the repository`);
        s = statSync(target);
      }
      if (s.isDirectory()) walk(target, at);
      else if (s.isFile()) bytes += s.size;
      else throw new ArgoCdParameterError(`${what}: ${at} is not a regular file or a directory`);
      if (bytes > HELM_INPUT_LIMITS.chartBytes) throw new ArgoCdParameterError(`${what} holds more than ${HELM_INPUT_LIMITS.chartBytes / (1024 * 1024)} MiB`);
    }
    seen.delete(real);
  };
  walk(dir, relative(repo.app, dir) || '.');
  return bytes;
}
