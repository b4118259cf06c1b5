import { isMap, isSeq, type Document } from 'yaml';
import { pathText, type JsonValue, type Path } from './json';

/**
 * A machine-applicable fix: the edits that turn a document (a GracefulGateway spec; for `lint`, a
 * manifest object) into one without the trap. Data, not code, so a finding carries it in
 * `plan.json`, a test can apply it and plan again, and a linter can offer it as an autofix.
 */
export type FixPath = Path;

/** Set `path` to `set` (creating the maps on the way), or remove the key at `path`. */
export type FixEdit = { path: FixPath; set: JsonValue } | { path: FixPath; remove: true };

/** `Edit`: a spec fix's edits; lint's name the object each edits (src/lint/rule.ts). */
export type Fix<Edit = FixEdit> = {
  /** What the fix does, in the words of the finding's remediation. */
  description: string;
  edits: Edit[];
};

export const setAt = (path: FixPath, value: JsonValue): FixEdit => ({ path, set: value });
export const removeAt = (path: FixPath): FixEdit => ({ path, remove: true });

/** `spec.rollout.maxSurge` → ['spec', 'rollout', 'maxSurge'] (for spec paths, which never hold dots in keys). */
export function specPath(dotted: string): FixPath {
  return dotted.split('.');
}

/** One line per edit, for people: `spec.rollout.maxSurge: 0`, `spec.drain.timeout: (remove)`. */
export function describeFix(fix: Fix): string {
  return fix.edits.map((e) => `${pathText(e.path)}: ${'remove' in e ? '(remove)' : JSON.stringify(e.set)}`).join(', ');
}

type Container = Record<string | number, unknown> | unknown[];

function isContainer(v: unknown): v is Container {
  return typeof v === 'object' && v !== null;
}

/**
 * The document with the fix applied, as a new object (the input is not changed). A missing map on
 * the way is created; a scalar on the way is an error (the fix does not fit this document).
 */
export function applyFix<T>(doc: T, fix: Fix): T {
  const out = structuredClone(doc) as unknown;
  for (const edit of fix.edits) {
    if (edit.path.length === 0) throw new Error('a fix edit needs a path');
    const misfit = () => new Error(`fix '${fix.description}': ${pathText(edit.path)} runs through a value that is not a map or list`);
    let at: unknown = out;
    let absent = false;
    for (const key of edit.path.slice(0, -1)) {
      if (!isContainer(at)) throw misfit();
      const holder = at as Record<string | number, unknown>;
      if (holder[key] === undefined || holder[key] === null) {
        // Removing below a missing map is already done; setting creates the map.
        if ('remove' in edit) {
          absent = true;
          break;
        }
        holder[key] = {};
      }
      at = holder[key];
    }
    if (absent) continue;
    if (!isContainer(at)) throw misfit();
    const last = edit.path[edit.path.length - 1]!;
    if ('remove' in edit) {
      if (Array.isArray(at) && typeof last === 'number') at.splice(last, 1);
      else delete (at as Record<string | number, unknown>)[last];
    } else {
      (at as Record<string | number, unknown>)[last] = structuredClone(edit.set);
    }
  }
  return out as T;
}

/**
 * The fix applied to a parsed YAML document in place, keeping its comments and layout where the
 * edits do not touch them (the yaml library's setIn/deleteIn), for a `--fix` that rewrites a file.
 */
export function applyFixToYaml(doc: Document, fix: Fix): void {
  for (const edit of fix.edits) {
    if ('remove' in edit) {
      if (doc.hasIn(edit.path as unknown[])) doc.deleteIn(edit.path as unknown[]);
      continue;
    }
    // setIn creates missing maps; a list or scalar on the way must already be the right shape.
    const parent = doc.getIn(edit.path.slice(0, -1) as unknown[], true);
    if (parent !== undefined && !isMap(parent) && !isSeq(parent)) {
      throw new Error(`fix '${fix.description}': ${pathText(edit.path)} runs through a value that is not a map or list`);
    }
    doc.setIn(edit.path as unknown[], doc.createNode(edit.set));
  }
}
