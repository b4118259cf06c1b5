/**
 * The one way a YAML text a user wrote (a spec, a rendered manifest, a ConfigMap) becomes JSON
 * values. The yaml library alone would let things through to the user as its own words: an alias
 * bomb (a ReferenceError) and a key that is itself a list or a map (`? [a, b]`), which it turns into
 * the string "[ a, b ]" with a Node.js process warning ("Keys with collection values will be
 * stringified…") printed on stderr. Both become a problem naming the line here.
 *
 * It would also let a small text cost minutes or gigabytes: its duplicate-key check compares every
 * key of a mapping with every other (40,000 keys, 470 KiB: over a minute), and it holds about a
 * kilobyte per node at its peak (1 MiB of `0,0,0,…`: 500 MiB resident). So the text's work is
 * bounded before it is parsed (`yamlWork`: documents, and nodes counted from the indicators that
 * introduce them), keys are checked for duplicates in one pass, and a mapping's keys are bounded.
 */
import { isCollection, isMap, isScalar, LineCounter, parseAllDocuments, visit, type Document, type Node } from 'yaml';
import type { Problem } from './errors';

/** Aliases a document may expand: a billion-laughs document expands far more (the yaml library's guard). */
export const MAX_ALIAS_COUNT = 100;

/**
 * The YAML work one text may ask for. A gateway chart renders tens of documents and a few thousand
 * nodes; these are a hundred times that, and keep the parse, at its peak, well inside the Argo CD
 * plugin sidecar's 512 MiB (measured in test/core/yaml-limits.test.ts, docs/delivery.md "Bounds").
 */
export const YAML_LIMITS = {
  documents: 10_000,
  /** Indicators that introduce a node (`yamlWork`): at most about a kilobyte each at the parse's peak. */
  nodes: 250_000,
  keysPerMapping: 10_000,
} as const;

/**
 * The work a text asks of the parser, counted in one pass without parsing. `documents`: lines that
 * start with `---` (a document marker wherever it stands: no scalar may hold one), plus one.
 * `nodes`: the characters that introduce a node: a line break (a block key or item), `,`, `[`, `{`,
 * `- ` and `? ` (an item, an explicit key) and `: ` (a value, or `":` after a quoted key). Every node
 * but a collection's first child follows one, so a text holds at most twice as many nodes; a
 * scalar holding these characters is over-counted, which only makes the bound safer.
 */
export function yamlWork(text: string): { documents: number; nodes: number } {
  let documents = 1;
  let nodes = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 /* \n */) {
      nodes++;
      if (text.startsWith('---', i + 1)) {
        const after = text.charCodeAt(i + 4);
        if (Number.isNaN(after) || after === 10 || after === 13 || after === 32 || after === 9) documents++;
      }
    } else if (c === 44 /* , */ || c === 91 /* [ */ || c === 123 /* { */) nodes++;
    else if (c === 45 /* - */ || c === 63 /* ? */ || c === 58 /* : */) {
      const next = text.charCodeAt(i + 1);
      const spaceAfter = Number.isNaN(next) || next === 32 || next === 10 || next === 13 || next === 9;
      const prev = text.charCodeAt(i - 1);
      if (spaceAfter || (c === 58 && (prev === 34 /* " */ || prev === 39)) /* ' */) nodes++;
    }
  }
  return { documents, nodes };
}

/** Why `text` is refused before it is parsed, or undefined. */
function workProblem(text: string): Problem | undefined {
  const work = yamlWork(text);
  if (work.documents > YAML_LIMITS.documents) {
    return { message: `${work.documents} documents, more than the ${YAML_LIMITS.documents} gracegate reads in one input` };
  }
  if (work.nodes > YAML_LIMITS.nodes) {
    return {
      message: `about ${work.nodes} YAML nodes, more than the ${YAML_LIMITS.nodes} gracegate reads in one input (a rendered gateway chart has a few thousand)`,
    };
  }
  return undefined;
}

/**
 * Parses a text into its documents, once its work is within YAML_LIMITS; a problem otherwise.
 * `merge`: resolve `<<` merge keys as Go YAML (kubectl, Argo CD) does, for manifests that a
 * Kubernetes client will read; without it, `<<` is a key like any other (YAML 1.2).
 */
export function parseYamlDocuments(text: string, counter: LineCounter, options: { merge?: boolean } = {}): { docs: Document.Parsed[] } | { problem: Problem } {
  const problem = workProblem(text);
  if (problem) return { problem };
  // uniqueKeys off: the library's check is quadratic; keyProblem below does it in one pass.
  const parsed = parseAllDocuments(text, {
    lineCounter: counter,
    prettyErrors: false,
    keepSourceTokens: false,
    uniqueKeys: false,
    merge: options.merge ?? false,
  });
  return { docs: Array.isArray(parsed) ? parsed : [] };
}

const MERGE = '<<';

/** A key's text for comparing keys (a merge key, with `merge` on, is a Symbol). */
function keyText(key: unknown): string | undefined {
  if (!isScalar(key)) return undefined;
  const v = key.value;
  return typeof v === 'symbol' ? (v.description ?? '') : String(v);
}

/** Is this pair's key a merge key (`<<`, plain)? */
function isMergeKey(key: unknown): boolean {
  return isScalar(key) && (key.type === undefined || key.type === 'PLAIN') && keyText(key) === MERGE;
}

type KeyScan = { problem?: { at: number; message: string }; mergeKey?: number };

/**
 * One pass over a document's mappings: a key that is a collection, a mapping with too many keys, a
 * key given twice (the same text: JSON, and so kubectl, keeps one of them), and where the first
 * merge key is.
 */
function scanKeys(doc: Document): KeyScan {
  const scan: KeyScan = {};
  const at = (n: unknown) => (n as Node | undefined)?.range?.[0] ?? 0;
  visit(doc, {
    Map(_, map) {
      if (!isMap(map)) return undefined;
      if (map.items.length > YAML_LIMITS.keysPerMapping) {
        scan.problem = { at: at(map), message: `a mapping with ${map.items.length} keys, more than the ${YAML_LIMITS.keysPerMapping} gracegate reads in one` };
        return visit.BREAK;
      }
      const seen = new Set<string>();
      for (const pair of map.items) {
        if (isCollection(pair.key)) {
          scan.problem = {
            at: at(pair.key),
            message: 'a key that is a list or a map (`? [a, b]`, `? {a: 1}`): gracegate reads keys as text only; write the key as a plain string',
          };
          return visit.BREAK;
        }
        if (scan.mergeKey === undefined && isMergeKey(pair.key)) scan.mergeKey = at(pair.key);
        const text = keyText(pair.key);
        if (text === undefined) continue; // an alias as a key: the yaml library resolves it
        if (seen.has(text)) {
          scan.problem = { at: at(pair.key), message: `the key '${text.slice(0, 100)}' is given twice in one mapping: keys must be unique` };
          return visit.BREAK;
        }
        seen.add(text);
      }
      return undefined;
    },
  });
  return scan;
}

/**
 * The JSON value of a parsed document, or the problem that keeps it from having one: its line (none
 * when it is about the whole document) and words without a "YAML:" of their own.
 */
export function documentValue(doc: Document, counter: LineCounter): { value: unknown; mergeKeyLine?: number } | { problem: Problem } {
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    return { problem: { line: counter.linePos(e.pos[0]).line, message: e.message.split('\n')[0]! } };
  }
  const scan = scanKeys(doc);
  if (scan.problem) return { problem: { line: counter.linePos(scan.problem.at).line, message: scan.problem.message } };
  try {
    const value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    return scan.mergeKey === undefined ? { value } : { value, mergeKeyLine: counter.linePos(scan.mergeKey).line };
  } catch (err) {
    // The yaml library throws a ReferenceError for an alias bomb or an alias without its anchor:
    // about the document as a whole, no line of its own.
    return { problem: { message: (err as Error).message } };
  }
}

/** A whole text of one YAML document (no `---` stream): its value, or the problem with its line. */
export function yamlValue(text: string): { value: unknown } | { problem: Problem } {
  const counter = new LineCounter();
  const parsed = parseYamlDocuments(text, counter);
  if ('problem' in parsed) return parsed;
  const list = parsed.docs;
  if (list.length > 1) return { problem: { line: counter.linePos(list[1]!.range[0]).line, message: 'expected one document, found more than one' } };
  if (list.length === 0) return { value: null };
  return documentValue(list[0]!, counter);
}
