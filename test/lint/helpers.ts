import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dump } from 'js-yaml';
import { parseLbFlag } from '../../src/cli/lint-command';
import { lbBehaviour } from '../../src/lb/registry';
import { planGateway } from '../../src/plan/plan-gateway';
import { podChanges } from '../../src/pod/pod-changes';
import { parseGatewaySpec } from '../../src/schema/parse-spec';
import type { LintOptions } from '../../src/lint/context';
import { lintDocuments, type LintReport } from '../../src/lint/lint';
import { readManifests } from '../../src/lint/manifests';
import type { FixEdit } from '../../src/lint/rule';
import { REPO_ROOT } from '../support/repo';
import { isObject, type Path } from '../../src/core/json';

/** One minimal manifest per rule: its `# lint:` flags and the lines marked `# expect: rule-id`. */
export const TRAPS = join(REPO_ROOT, 'test', 'lint', 'traps');

export type Trap = { rule: string; file: string; text: string; flags: string[]; expected: Array<{ rule: string; line: number }> };

export function traps(): Trap[] {
  return readdirSync(TRAPS)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => {
      const file = join(TRAPS, f);
      const text = readFileSync(file, 'utf8');
      const flags = (/^# lint: (.*)$/m.exec(text)?.[1] ?? '').split(' ').filter((s) => s !== '');
      const expected = text.split('\n').flatMap((l, i) => {
        const m = /# expect: (.*)$/.exec(l);
        return m ? m[1]!.split(',').map((r) => ({ rule: r.trim(), line: i + 1 })) : [];
      });
      return { rule: f.replace(/\.yaml$/, ''), file, text, flags, expected };
    });
}

/** What `--spec FILE` gives lint, in process. */
export function specOptions(file: string): LintOptions {
  const resolved = parseGatewaySpec(readFileSync(file, 'utf8'), file);
  const plan = planGateway(resolved);
  return {
    plan: { plan, changes: podChanges(plan), source: `--spec ${file}` },
    lb: { behaviour: lbBehaviour(resolved.spec.spec.loadBalancer, resolved.given), source: `--spec ${file}` },
    nodes: { value: resolved.spec.spec.nodes, source: `${file} spec.nodes` },
  };
}

/** The in-process options the `# lint:` flags stand for (--lb, --nodes, --spec). */
export function optionsOf(flags: string[]): LintOptions {
  const options: LintOptions = {};
  for (let i = 0; i < flags.length; i += 2) {
    if (flags[i] === '--spec') Object.assign(options, specOptions(flags[i + 1]!));
    else if (flags[i] === '--lb') options.lb = parseLbFlag(flags[i + 1]!);
    else if (flags[i] === '--nodes') options.nodes = { value: Number(flags[i + 1]), source: '--nodes' };
    else throw new Error(`unknown trap flag ${flags[i]}`);
  }
  return options;
}

export function lintText(text: string, name: string, options: LintOptions = {}): LintReport {
  return lintDocuments(readManifests(text, name), options);
}

/** Objects of a stream as JSON, keyed by `Kind/namespace/name`, in order. */
export function objectsByIdOf(text: string): Array<{ id: string; value: Record<string, unknown> }> {
  return readManifests(text, 'walk').flatMap((d) => {
    if (!isObject(d.value)) return [];
    const v = d.value as Record<string, any>;
    return [{ id: `${v.kind}/${v.metadata?.namespace ? `${v.metadata.namespace}/` : ''}${v.metadata?.name}`, value: structuredClone(v) }];
  });
}

function setAt(root: Record<string, unknown>, path: Path, edit: FixEdit): void {
  let node: any = root;
  path.slice(0, -1).forEach((p, i) => {
    // A missing step becomes a list where the next step is an index, a map otherwise.
    if (node[p] === undefined || node[p] === null) node[p] = typeof path[i + 1] === 'number' ? [] : {};
    node = node[p];
  });
  const last = path[path.length - 1]!;
  if ('remove' in edit) {
    if (Array.isArray(node) && typeof last === 'number') node.splice(last, 1);
    else delete node[last];
  } else {
    node[last] = structuredClone(edit.set);
  }
}

/** Applies a fix's edits to the objects (in place). */
export function applyEdits(objects: Array<{ id: string; value: Record<string, unknown> }>, edits: FixEdit[]): void {
  for (const e of edits) {
    const o = objects.find((x) => x.id === e.object);
    if (!o) throw new Error(`fix edits ${e.object}, which is not in the input`);
    setAt(o.value, e.path, e);
  }
}

export function streamOf(objects: Array<{ value: Record<string, unknown> }>): string {
  return objects.map((o) => `---\n${dump(o.value, { lineWidth: -1 })}`).join('');
}

export function valueAt(objects: Array<{ id: string; value: Record<string, unknown> }>, id: string, path: Path): unknown {
  let v: any = objects.find((o) => o.id === id)?.value;
  for (const p of path) v = v === undefined || v === null ? undefined : v[p];
  return v;
}
