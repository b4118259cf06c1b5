import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { LintFinding } from '../../src/lint/rule';
import { LINT_RULES } from '../../src/lint/registry';
import { REPO_ROOT } from '../support/repo';

/**
 * gracegate lint beside a general Kubernetes linter, on the same files in the same run.
 *
 * kube-score is run (scripts/prepare-test-env.sh builds it). kube-linter could not be installed
 * here (the Go module proxy refuses golang.stackrox.io/kube-linter), so its column is read from
 * its own check list (stackrox/kube-linter v0.8.3, docs/generated/checks.md), and says so.
 */

export const KUBE_SCORE_VERSION = 'v1.20.0';
export const KUBE_SCORE = join(REPO_ROOT, '.cache', 'tools', `kube-score-${KUBE_SCORE_VERSION}`, 'kube-score');
export const KUBE_LINTER_VERSION = 'v0.8.3';

/** kube-score's checks that look at the same thing as a gracegate rule (from `kube-score list`). */
export const KUBE_SCORE_RELATED: Record<string, string[]> = {
  'liveness-on-drain-aware-path': ['pod-probes', 'pod-probes-identical'],
  'readiness-on-lb-path': ['pod-probes', 'pod-probes-identical'],
  'hpa-with-replicas': ['deployment-targeted-by-hpa-does-not-have-replicas-configured'],
  'pdb-blocks-eviction': ['poddisruptionbudget-has-policy', 'deployment-has-poddisruptionbudget'],
  'rollout-surge-and-unavailable-zero': ['deployment-strategy'],
  'rollout-surge-deadlock': ['deployment-strategy', 'deployment-has-host-podantiaffinity'],
  'anti-affinity-unschedulable': ['deployment-has-host-podantiaffinity'],
  'health-service-not-local': ['service-type'],
  'health-probe-bypasses-pod': ['service-type'],
  'witness-port-exposed': ['service-type', 'container-ports-check'],
  'hc-network-policy-placeholder': ['pod-networkpolicy', 'networkpolicy-targets-pod'],
};

/** kube-linter's checks for the same things, by its documentation (not run here). */
export const KUBE_LINTER_DOCUMENTED: Record<string, string> = {
  'pdb-blocks-eviction': 'partly: pdb-max-unavailable and pdb-min-available find one budget at 0 or at every replica; two budgets over one pod, no',
  'liveness-on-drain-aware-path': 'no (liveness-port checks that the probe port is exposed)',
  'readiness-on-lb-path': 'no (readiness-port checks that the probe port is exposed)',
  'rollout-surge-and-unavailable-zero': 'no (no-rolling-update-strategy, off by default, checks the strategy type)',
  'rollout-surge-deadlock': 'no (no-anti-affinity asks for anti-affinity)',
  'anti-affinity-unschedulable': 'no (no-anti-affinity asks for anti-affinity)',
  'hpa-with-replicas': 'no (dangling-horizontalpodautoscaler, hpa-minimum-three-replicas)',
};

export type KubeScoreObject = {
  object_name: string;
  type_meta: { kind: string };
  object_meta: { name: string; namespace?: string };
  checks: Array<{ check: { id: string }; grade: number; skipped: boolean }>;
};

/** kube-score on one file: its objects and checks (grade < 10 and not skipped = reported). */
export function kubeScore(file: string): KubeScoreObject[] {
  if (!existsSync(KUBE_SCORE)) throw new Error(`${KUBE_SCORE} missing: run bash scripts/prepare-test-env.sh`);
  const r = spawnSync(KUBE_SCORE, ['score', file, '--output-format', 'json'], { encoding: 'utf8', timeout: 30_000 });
  // Exit 1 means "found something"; anything else is a failure to run.
  if (r.status !== 0 && r.status !== 1) throw new Error(`kube-score ${file} failed (${r.status ?? r.signal}): ${r.stderr}`);
  return JSON.parse(r.stdout) as KubeScoreObject[];
}

export function reportedChecks(objects: KubeScoreObject[], object: string): string[] {
  const [kind, ...rest] = object.split('/');
  const name = rest[rest.length - 1];
  const namespace = rest.length > 1 ? rest[0] : undefined;
  return objects
    .filter(
      (o) => o.type_meta.kind === kind && o.object_meta.name === name && (namespace === undefined || (o.object_meta.namespace ?? namespace) === namespace),
    )
    .flatMap((o) => o.checks.filter((c) => !c.skipped && c.grade < 10).map((c) => c.check.id));
}

export type Observation = { fixture: string; findings: LintFinding[]; kubeScore: KubeScoreObject[] };

/** The table of docs/lint.md: per rule, where the run saw the trap, and what kube-score (run) and kube-linter (documented) say. */
export function comparisonTable(observations: Observation[]): string {
  const rows = LINT_RULES.map((rule) => {
    const seen = observations.filter((o) => o.findings.some((f) => f.rule === rule.id));
    const related = KUBE_SCORE_RELATED[rule.id] ?? [];
    const caught = new Set<string>();
    for (const o of seen) {
      for (const f of o.findings.filter((x) => x.rule === rule.id)) {
        for (const id of reportedChecks(o.kubeScore, f.object)) if (related.includes(id)) caught.add(id);
      }
    }
    const where = seen.map((o) => o.fixture).join('; ') || 'not seen';
    const ks = caught.size > 0 ? `yes: ${[...caught].sort().join(', ')}` : 'no';
    return `| \`${rule.id}\` | ${rule.severity} | ${where} | ${ks} | ${KUBE_LINTER_DOCUMENTED[rule.id] ?? 'no'} |`;
  });
  return [
    `| trap (gracegate rule) | severity | where this run found it | kube-score ${KUBE_SCORE_VERSION} (run on the same files) | kube-linter ${KUBE_LINTER_VERSION} (by its check list, not run) |`,
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** What kube-score reports on a fixture, by check id (to show what a general linter does find there). */
export function kubeScoreSummary(observations: Observation[], fixtures: string[]): string {
  return fixtures
    .map((name) => {
      const o = observations.find((x) => x.fixture === name)!;
      const ids = [...new Set(o.kubeScore.flatMap((k) => k.checks.filter((c) => !c.skipped && c.grade < 10).map((c) => c.check.id)))].sort();
      const ours = [...new Set(o.findings.map((f) => f.rule))].sort();
      return `- **${name}**: gracegate: ${ours.length ? ours.map((r) => `\`${r}\``).join(', ') : 'none'}; kube-score: ${ids.length ? ids.map((r) => `\`${r}\``).join(', ') : 'none'}`;
    })
    .join('\n');
}
