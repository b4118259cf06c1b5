/**
 * helm as the Argo CD plugin runs it: with Helm homes of its own, inside a time budget that fits
 * Argo CD's, and with a chart's missing dependencies built first, as Argo CD's repo-server does.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MANIFESTS_MAX_BYTES } from '../../core/bounded-read';
import { GracegateError } from '../../core/errors';
import { DEADLINE_ENV, secondsFromEnv } from './deadline';

/** helm failed, timed out, or the budget setting is wrong; the message says which and what to do (exit 2). */
export class HelmRunError extends GracegateError {}

/**
 * What all helm calls of one `generate` may take together. Argo CD's repo-server gives a whole
 * manifest request 60 s by default (`controller.repo.server.timeout.seconds` and
 * `server.repo.server.timeout.seconds` in argocd-cmd-params-cm), and that request also fetches the
 * repository and sends the app to the plugin; each plugin command is bounded on its own by the
 * sidecar's ARGOCD_EXEC_TIMEOUT (90 s) (argo-cd docs/operator-manual/config-management-plugins.md).
 * 45 s leaves 15 s of the 60 for the rest (gracegate's own start, plan and post-render take about
 * a second), so a slow helm ends with gracegate's message instead of Argo CD's kill.
 */
export const DEFAULT_HELM_BUDGET_SECONDS = 45;
export const HELM_BUDGET_ENV = 'GRACEGATE_HELM_TIMEOUT';

/** Where helm keeps its cache, config and data; Argo CD's own helm runs get a temp home too (argo-cd util/helm/cmd.go). */
const HELM_HOMES = ['HELM_CACHE_HOME', 'HELM_CONFIG_HOME', 'HELM_DATA_HOME'] as const;

// argo-cd util/helm/helm.go IsMissingDependencyErr: the message helm 3 and 4 print for an unbuilt dependency.
const MISSING_DEPENDENCY = /found in (Chart|requirements)\.yaml, but missing in charts\/? directory/;

export const helmBudgetSeconds = (env: NodeJS.ProcessEnv): number => secondsFromEnv(env, HELM_BUDGET_ENV, DEFAULT_HELM_BUDGET_SECONDS);

export interface HelmTemplateRun {
  readonly helm: string;
  /** `template` and its arguments (helmTemplateArgs). */
  readonly args: readonly string[];
  readonly chart: string;
  readonly env: NodeJS.ProcessEnv;
  readonly log: (line: string) => void;
  /** The whole command's deadline (epoch ms): helm never runs past it, whatever its own budget. */
  readonly deadline?: number;
  /** Told the step before each helm call, so that a deadline names it (deadline.ts). */
  readonly step?: (name: string) => void;
}

/**
 * A value for `--set-string key=value`, escaped the way Argo CD escapes one (argo-cd
 * util/helm/cmd.go, cleanSetParameters): a comma not already escaped is escaped, so it cannot end
 * the value and start another key, and a value written as a list, `{a,b}`, stays a list. Unlike
 * Argo CD's, an escape is read as helm's strvals parser reads it (a backslash escapes the next
 * character: helm/helm pkg/strvals/parser.go, runesUntil), so `a\\,b=1` cannot end the value
 * either, and a value that only starts like a list (`{a}b=1`, which helm reads as a list and a
 * second key) is a string.
 */
export function helmSetValue(value: string): string {
  if (/^\{[^{}\\]*\}$/.test(value)) return value;
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '\\') {
      // An escape pair stays as it is; a backslash at the very end escapes itself.
      out += i + 1 < value.length ? c + value[++i] : '\\\\';
    } else if (c === ',') out += '\\,';
    else if (c === '{' && i === 0) out += '\\{';
    else out += c;
  }
  return out;
}

export type HelmTemplateInputs = {
  release: string;
  chart: string;
  namespace: string;
  kubeVersion?: string;
  valuesFiles: readonly string[];
  set: Readonly<Record<string, string>>;
};

/**
 * `helm template`'s arguments: every value a tenant gave is a flag's own value (`--flag=value`) or
 * a positional after `--`, so none can be read as a flag of its own (`--post-renderer`,
 * `--set-file`); `set` values go as `--set-string`, so `true` stays a string.
 */
export function helmTemplateArgs(o: HelmTemplateInputs): string[] {
  const args = ['template', `--namespace=${o.namespace}`];
  if (o.kubeVersion) args.push(`--kube-version=${o.kubeVersion}`);
  for (const file of o.valuesFiles) args.push(`--values=${file}`);
  for (const [key, value] of Object.entries(o.set)) args.push(`--set-string=${key}=${helmSetValue(value)}`);
  args.push('--', o.release, o.chart);
  return args;
}

/**
 * Runs `helm template`; when the chart's dependencies are not built, runs `helm dependency build`
 * and templates again (argo-cd reposerver/repository/repository.go, helmTemplate and runHelmBuild).
 * The plugin sidecar's home is read-only, and a dependency from a chart repository needs a writable
 * repository cache (helm writes the repository index there): every Helm home not set in the
 * environment points at a temporary directory, removed afterwards.
 */
export function helmTemplate(run: HelmTemplateRun): string {
  const budgetSeconds = helmBudgetSeconds(run.env);
  const budgetEnds = Date.now() + budgetSeconds * 1000;
  const deadline = Math.min(budgetEnds, run.deadline ?? Number.POSITIVE_INFINITY);
  // Which bound stops helm, in the words of its setting.
  const bound =
    deadline < budgetEnds
      ? `the deadline of the whole command (${DEADLINE_ENV}), inside Argo CD's 60 s repo-server timeout; to allow more, raise Argo CD's timeouts and ${DEADLINE_ENV} together (docs/delivery.md)`
      : `${budgetSeconds}s, gracegate's budget inside Argo CD's 60 s repo-server timeout; to allow more, raise Argo CD's timeouts and ${HELM_BUDGET_ENV} together (docs/delivery.md)`;
  const unset = HELM_HOMES.filter((name) => !run.env[name]);
  const home = unset.length > 0 ? mkdtempSync(join(tmpdir(), 'gracegate-helm-')) : undefined;
  const env: NodeJS.ProcessEnv = { ...run.env };
  for (const name of unset) env[name] = join(home!, name.toLowerCase().replace(/^helm_|_home$/g, ''));
  const helm = (args: readonly string[]) => {
    run.step?.(`helm ${args[0]}`);
    const left = deadline - Date.now();
    const r = left > 0 ? spawnSync(run.helm, args, { encoding: 'utf8', env, timeout: left, maxBuffer: MANIFESTS_MAX_BYTES }) : undefined;
    if ((r?.error as NodeJS.ErrnoException | undefined)?.code === 'ENOBUFS') {
      throw new HelmRunError(`helm ${args[0]} wrote more than ${MANIFESTS_MAX_BYTES / (1024 * 1024)} MiB, the most gracegate reads of rendered manifests`);
    }
    if (r === undefined || (r.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT') {
      throw new HelmRunError(`helm ${args[0]} did not finish within ${bound}`);
    }
    if (r.error) throw new HelmRunError(`helm ${args[0]}: ${r.error.message}`);
    return r;
  };
  try {
    run.log(`${run.helm} ${run.args.join(' ')}`);
    let r = helm(run.args);
    if (r.status !== 0 && MISSING_DEPENDENCY.test(r.stderr)) {
      run.log(`the chart's dependencies are not built: ${run.helm} dependency build ${run.chart}`);
      const build = helm(['dependency', 'build', '--', run.chart]);
      if (build.status !== 0) throw new HelmRunError(`helm dependency build failed (exit ${build.status}):\n${build.stderr.trim()}`);
      r = helm(run.args);
    }
    if (r.status !== 0) throw new HelmRunError(`helm template failed (exit ${r.status}):\n${r.stderr.trim()}`);
    if (r.stderr.trim() !== '') run.log(`helm: ${r.stderr.trim()}`);
    return r.stdout;
  } finally {
    if (home !== undefined) rmSync(home, { recursive: true, force: true });
  }
}
