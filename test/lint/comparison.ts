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
  'pdb-missing': ['deployment-has-poddisruptionbudget'],
  'replicas-may-share-node': ['deployment-has-host-podantiaffinity'],
  'autoscale-min-one': ['horizontalpodautoscaler-replicas'],
};

/**
 * Polaris's checks for the same things, by its check definitions (FairwindsOps/polaris v10.2.2,
 * pkg/config/checks/*.yaml), not run: the Go module proxy refuses github.com/fairwindsops/polaris
 * (403 "This module version is not available" on @v/list, @latest and @master), and no package
 * registry this machine reaches ships it.
 */
export const POLARIS_VERSION = 'v10.2.2';
export const POLARIS_DOCUMENTED: Record<string, string> = {
  'pdb-blocks-eviction': 'partly: pdbDisruptionsIsZero finds one budget with maxUnavailable 0 or minAvailable 100%; two budgets over one pod, no',
  'readiness-on-lb-path': 'no (readinessProbeMissing asks for a probe, not which endpoint)',
  'liveness-on-drain-aware-path': 'no (livenessProbeMissing asks for a probe)',
  'hpa-with-replicas': 'no (deploymentMissingReplicas asks for replicas >= 2)',
  'anti-affinity-unschedulable': 'no (topologySpreadConstraint asks for a spread)',
  'rollout-surge-deadlock': 'no (hostPortSet flags any hostPort, as a security matter)',
  'pdb-missing': 'partly: missingPodDisruptionBudget asks each Deployment for a budget named after it, selecting app.kubernetes.io/name',
  'replicas-may-share-node': 'partly: topologySpreadConstraint asks for a spread constraint, whatever the replicas',
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
  'replicas-may-share-node': 'partly: no-anti-affinity (on by default) asks a Deployment of 2 or more replicas for pod anti-affinity',
  'autoscale-min-one': 'partly: hpa-minimum-three-replicas (off by default) asks for minReplicas 3 or more',
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

/** One trap's row of the comparison, as docs/lint-comparison.json keeps it. */
export type TrapRow = { rule: string; severity: string; where: string; kubeScore: string; polaris: string; kubeLinter: string };

/** The measured speed, as the bench writes it (bench/lint-bench.ts). */
export type Timing = {
  objects: number;
  mib: number;
  runs: number;
  load: number;
  cpus: number;
  gracegate: { wallMs: number; cpuMs: number };
  kubeScore: { wallMs: number; cpuMs: number; runs: number };
};

/** docs/lint-comparison.json: what the table of docs/lint.md is rendered from. */
export type ComparisonResults = { traps: TrapRow[]; timing: Timing };

/** Per rule, where the run saw the trap, and what kube-score (run), Polaris and kube-linter (by their check lists) say. */
export function trapRows(observations: Observation[]): TrapRow[] {
  return LINT_RULES.map((rule) => {
    const seen = observations.filter((o) => o.findings.some((f) => f.rule === rule.id));
    const related = KUBE_SCORE_RELATED[rule.id] ?? [];
    const caught = new Set<string>();
    for (const o of seen) {
      for (const f of o.findings.filter((x) => x.rule === rule.id)) {
        for (const id of reportedChecks(o.kubeScore, f.object)) if (related.includes(id)) caught.add(id);
      }
    }
    return {
      rule: rule.id,
      severity: rule.severity,
      where: seen.map((o) => o.fixture).join('; ') || 'not seen',
      kubeScore: caught.size > 0 ? `yes: ${[...caught].sort().join(', ')}` : 'no',
      polaris: POLARIS_DOCUMENTED[rule.id] ?? 'no',
      kubeLinter: KUBE_LINTER_DOCUMENTED[rule.id] ?? 'no',
    };
  });
}

/** The table of docs/lint.md, from the results file: the traps, then the time per 10,000 objects. */
export function comparisonTable(results: ComparisonResults): string {
  const t = results.timing;
  const per10k = (ms: number) => ((ms * 10_000) / t.objects / 1000).toFixed(1);
  const traps = [
    `| trap (gracegate rule) | severity | where this run found it | kube-score ${KUBE_SCORE_VERSION} (run on the same files) | Polaris ${POLARIS_VERSION} (by its check list, not run) | kube-linter ${KUBE_LINTER_VERSION} (by its check list, not run) |`,
    '|---|---|---|---|---|---|',
    ...results.traps.map((r) => `| \`${r.rule}\` | ${r.severity} | ${r.where} | ${r.kubeScore} | ${r.polaris} | ${r.kubeLinter} |`),
    `| **found** | | ${results.traps.filter((r) => r.where !== 'not seen').length} of ${results.traps.length} | ${results.traps.filter((r) => r.kubeScore.startsWith('yes')).length} (${results.traps.filter((r) => r.kubeScore === 'no').length} missed) | ${results.traps.filter((r) => !r.polaris.startsWith('no')).length} partly (${results.traps.filter((r) => r.polaris.startsWith('no')).length} missed) | ${results.traps.filter((r) => !r.kubeLinter.startsWith('no')).length} partly (${results.traps.filter((r) => r.kubeLinter.startsWith('no')).length} missed) |`,
    `| **CPU per 10,000 objects** (wall) | | ${per10k(t.gracegate.cpuMs)} s (${per10k(t.gracegate.wallMs)} s) | ${per10k(t.kubeScore.cpuMs)} s (${per10k(t.kubeScore.wallMs)} s): ${(t.kubeScore.cpuMs / t.gracegate.cpuMs).toFixed(1)} x gracegate's CPU | not run | not run |`,
  ];
  return [
    ...traps,
    '',
    `Speed from \`node dist/bench/lint-bench.js --write\` (docs/lint-comparison.json): ${t.objects} objects (${t.mib} MiB), medians of ${t.runs} fresh \`gracegate lint\` processes and ${t.kubeScore.runs} of kube-score, on ${t.cpus} shared CPUs at load average ${t.load}; CPU is user + system (a loaded machine stretches the wall time, not the CPU).`,
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
