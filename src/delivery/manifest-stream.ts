import { LineCounter, stringify, type Document } from 'yaml';
import { GracegateError } from '../core/errors';
import { kubernetesObjectProblem } from '../core/kubernetes-object';
import { YAML_OUTPUT } from '../core/yaml-output';
import { documentValue, parseYamlDocuments } from '../core/yaml-input';

/**
 * A stream of rendered Kubernetes manifests (what `helm template` or `kubectl kustomize` prints),
 * read so that it can be written back with only the touched documents changed: an untouched
 * document is written as its original text, byte for byte, comments and all.
 */

/** A stream that is not a list of Kubernetes objects. The message names the document and line. */
export class ManifestStreamError extends GracegateError {}

/** The four fields that identify an object in a stream. */
export type ObjectId = { apiVersion: string; kind: string; name: string; namespace?: string };

export type ManifestDoc = {
  /** 1-based position among the stream's documents (empty ones included), for messages. */
  index: number;
  line: number;
  /** The parsed document; edit it and mark the entry `touched` to have it re-serialised. */
  doc: Document;
  /** The original text of the document, including its `---` and the comments before it. */
  source: string;
  /** The document as JSON; null for an empty document (only comments, or nothing) and for a List. */
  object: Record<string, unknown> | null;
  touched: boolean;
  /** Left out of the output: an object an earlier run of gracegate appended that the plan no longer has. */
  removed?: boolean;
  /**
   * An item of a `kind: List` (what `kubectl get -o yaml` prints): an entry of its own, so every
   * rule finds it like a document, while its text stays the List's (`doc` is the List's, and editing
   * the item re-serialises the List).
   */
  inList?: { list: ManifestDoc; item: number };
  /**
   * The line of a `<<` merge key in the document, if it has one. Its object is read with the merge
   * resolved, as kubectl reads it; gracegate refuses to change such a document (post-render's `edit`).
   */
  mergeKeyLine?: number;
};

/** A `kind: List` (apiVersion v1): its objects are in `items`; kubectl apply applies each. */
function isList(v: unknown): v is { items: unknown[] } {
  return typeof v === 'object' && v !== null && (v as Record<string, unknown>).kind === 'List' && Array.isArray((v as Record<string, unknown>).items);
}

export type ManifestStream = { docs: ManifestDoc[] };

/** What makes a document a Kubernetes object: apiVersion, kind and metadata.name (or generateName). */
function kubernetesProblem(v: unknown): string | null {
  const problem = kubernetesObjectProblem(v, 'refused');
  if (!problem) return null;
  return 'notAMap' in problem ? problem.notAMap : `is not a Kubernetes object (no ${problem.missing.join(', ')})`;
}

/**
 * Parses a multi-document stream. Empty documents (a lone `---`, comment-only templates) are kept
 * as they are; a `kind: List` is kept, each of its items an entry of its own (`inList`); a stream without a single object, a YAML error or a document that is not a
 * Kubernetes object throws ManifestStreamError naming `source`, the document and its line.
 */
export function parseManifestStream(text: string, source = 'stdin'): ManifestStream {
  const counter = new LineCounter();
  // Merge keys resolved as Go YAML resolves them: every check sees the object kubectl will apply.
  const parsed = parseYamlDocuments(text, counter, { merge: true });
  if ('problem' in parsed) throw new ManifestStreamError(`${source}: ${parsed.problem.message}`);
  const list = parsed.docs;
  const docs: ManifestDoc[] = [];
  let from = 0;
  list.forEach((doc, i) => {
    // Each document owns the text from the end of the previous one to its own end, so the
    // pieces put together are the input exactly.
    const to = i === list.length - 1 ? text.length : doc.range[2];
    const start = Math.min(doc.range[0], to);
    const line = counter.linePos(start).line;
    const where = `${source}: document ${i + 1} (line ${line})`;
    if (doc.errors.length > 0) {
      const e = doc.errors[0]!;
      throw new ManifestStreamError(`${source}:${counter.linePos(e.pos[0]).line}: malformed YAML in document ${i + 1}: ${e.message.split('\n')[0]}`);
    }
    let object: unknown = null;
    let merge: { mergeKeyLine?: number } = {};
    if (doc.contents !== null) {
      // An alias bomb, an alias whose anchor is in another document (anchors do not cross `---`),
      // a key given twice, or a key that is a list or a map.
      const read = documentValue(doc, counter);
      if ('problem' in read) throw new ManifestStreamError(`${source}: document ${i + 1} (line ${read.problem.line ?? line}): ${read.problem.message}`);
      object = read.value;
      if (read.mergeKeyLine !== undefined) merge = { mergeKeyLine: read.mergeKeyLine };
    }
    if (isList(object)) {
      const list: ManifestDoc = { index: i + 1, line, doc, source: text.slice(from, to), object: null, touched: false, ...merge };
      docs.push(list);
      object.items.forEach((item, n) => {
        const node = doc.getIn(['items', n], true) as { range?: [number, number, number] } | undefined;
        const itemLine = counter.linePos(node?.range?.[0] ?? start).line;
        const problem = kubernetesProblem(item);
        if (problem) throw new ManifestStreamError(`${source}: document ${i + 1}, the List's item ${n + 1} (line ${itemLine}) ${problem}`);
        docs.push({
          index: i + 1,
          line: itemLine,
          doc,
          source: '',
          object: item as Record<string, unknown>,
          touched: false,
          inList: { list, item: n },
          ...merge,
        });
      });
      from = to;
      return;
    }
    if (object !== null) {
      const problem = kubernetesProblem(object);
      if (problem) throw new ManifestStreamError(`${where} ${problem}`);
    }
    docs.push({ index: i + 1, line, doc, source: text.slice(from, to), object: object as Record<string, unknown> | null, touched: false, ...merge });
    from = to;
  });
  if (!docs.some((d) => d.object !== null)) {
    throw new ManifestStreamError(`${source}: no Kubernetes objects in the input (${text.trim() === '' ? 'it is empty' : 'only empty documents'})`);
  }
  return { docs };
}

export function objectId(o: Record<string, unknown>): ObjectId {
  const meta = o.metadata as Record<string, unknown>;
  return {
    apiVersion: o.apiVersion as string,
    kind: o.kind as string,
    name: (meta.name ?? meta.generateName) as string,
    ...(typeof meta.namespace === 'string' ? { namespace: meta.namespace } : {}),
  };
}

/** `Kind/namespace/name` (namespace left out when the object has none), for messages. */
export function describeObject(o: Record<string, unknown>): string {
  const id = objectId(o);
  return `${id.kind}/${id.namespace ? `${id.namespace}/` : ''}${id.name}`;
}

/**
 * Same object? The API group (not the version) and kind, the name, and the namespace when both
 * name one: a chart rendered without `--namespace` leaves it out.
 */
export function sameObject(a: ObjectId, b: ObjectId): boolean {
  const group = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0] : '');
  return (
    group(a.apiVersion) === group(b.apiVersion) &&
    a.kind === b.kind &&
    a.name === b.name &&
    (a.namespace === undefined || b.namespace === undefined || a.namespace === b.namespace)
  );
}

function withNewline(s: string): string {
  return s.endsWith('\n') ? s : `${s}\n`;
}

/** A new document holding `object`, as gracegate writes it (a `---` line first). */
export function documentText(object: unknown, comment?: string): string {
  return `---\n${comment ? `# ${comment}\n` : ''}${stringify(object, YAML_OUTPUT)}`;
}

function startsWithMarker(s: string): boolean {
  return /^(\s*#[^\n]*\n|\s*\n)*---(\s|$)/.test(s);
}

/**
 * Writes the stream back: untouched documents as their original text, touched ones re-serialised
 * from their (edited) parse tree, then `appended` (already serialised documents). Every document
 * after the first starts with `---`.
 */
export function renderManifestStream(stream: ManifestStream, appended: string[] = []): string {
  // A List's items are written with their List.
  const pieces = stream.docs.filter((d) => !d.inList && !d.removed).map((d) => (d.touched ? d.doc.toString(YAML_OUTPUT) : d.source));
  const out: string[] = [];
  for (const piece of [...pieces, ...appended]) {
    if (piece.trim() === '' && out.length > 0) continue;
    const text = out.length > 0 && !startsWithMarker(piece) ? `---\n${piece}` : piece;
    // A piece owns the text up to its end, so the line break after a bare `---` belongs to the next
    // one: add a break only where neither side has it (adding it always grew a `---\n\n---` stream
    // by one newline per pass).
    const last = out.length - 1;
    if (last >= 0 && !out[last]!.endsWith('\n') && !text.startsWith('\n')) out[last] += '\n';
    out.push(text);
  }
  return withNewline(out.join(''));
}
