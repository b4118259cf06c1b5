/**
 * `gracegate lint` on the cluster's live objects (`kubectl get … -o yaml`, as the API server
 * stores them: defaults filled in, status, managedFields), and the findings docs/lint.md promises
 * for a chart's defaults, read from the lint corpus's reviewed expectations.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { REPO_ROOT } from '../../../support/repo';
import { chartDir } from '../charts';
import { helm, kubectl } from '../kubectl';
import { createGatewayNamespace } from '../pod-security';
import { run } from '../sh';

export type LintFinding = { rule: string; severity: string; object: string; field: string; message: string };

const GRACEGATE = join(REPO_ROOT, 'bin/gracegate.js');

/** `gracegate lint - --format json` over `manifests` (a kubectl List in YAML); exit 0 or 1 both answer. */
export function lintLive(manifests: string, extra: readonly string[] = []): { findings: LintFinding[]; objects: number } {
  const out = run(process.execPath, [GRACEGATE, 'lint', '-', '--format', 'json', '--fail-on', 'none', ...extra], { input: manifests, timeoutMs: 120_000 });
  const parsed = JSON.parse(out) as { findings: LintFinding[]; objects: number };
  return { findings: parsed.findings, objects: parsed.objects };
}

/** The live objects lint reads, from every namespace (or one). */
export function liveObjects(kinds: string, namespace?: string): string {
  return kubectl(['get', kinds, ...(namespace ? ['-n', namespace] : ['-A']), '-o', 'yaml'], { timeoutMs: 120_000 });
}

/** The namespace of a finding's object (`Kind/namespace/name`), or '' for a cluster-wide one. */
export function findingNamespace(f: LintFinding): string {
  const parts = f.object.split('/');
  return parts.length === 3 ? parts[1]! : '';
}

/** The corpus's reviewed findings for istio/gateway VERSION with its defaults, moved to `namespace` and release `name`. */
export function expectedDefaultsFindings(version: string, namespace: string, name: string): Array<Pick<LintFinding, 'rule' | 'object' | 'field'>> {
  const file = join(REPO_ROOT, 'test/lint/corpus/expected', `istio-gateway-${version}-defaults.yaml`);
  const doc = parseYaml(readFileSync(file, 'utf8')) as { findings: Array<{ rule: string; object: string; field: string }> };
  return doc.findings.map((f) => {
    const [kind] = f.object.split('/');
    return { rule: f.rule, object: `${kind}/${namespace}/${name}`, field: f.field };
  });
}

/** The chart with its defaults, no gracegate: the release the corpus's expectations name (`igw`). */
export function installChartDefaults(version: string, namespace: string): void {
  createGatewayNamespace(namespace);
  // The lab's only value (nothing is pulled here); lint reads no pull policy.
  helm(['install', 'igw', chartDir(version), '-n', namespace, '--set', 'imagePullPolicy=IfNotPresent'], { helm: 'v31' });
}
