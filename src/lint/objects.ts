import { at, isObject, objAt, type Path } from '../core/json';
import { kubernetesObjectProblem } from '../core/kubernetes-object';
import { lineOfField, ManifestReadError, type ManifestDocument } from './manifests';

export type Obj = Record<string, unknown>;

export { at, objAt } from '../core/json';

export function isObjectAt(o: unknown, path: Path): boolean {
  return isObject(at(o, path));
}

export function listAt(o: unknown, path: Path): unknown[] {
  const v = at(o, path);
  return Array.isArray(v) ? v : [];
}

/** A Kubernetes object of the input, where it is, and how findings name it. */
export class LintObject {
  readonly kind: string;
  readonly apiVersion: string;
  readonly name: string;
  readonly namespace: string | undefined;

  constructor(
    readonly value: Obj,
    readonly doc: ManifestDocument,
    /** Where the object sits in its document: [] or ['items', i] for a List's item. */
    readonly prefix: Path = [],
  ) {
    this.kind = value.kind as string;
    this.apiVersion = value.apiVersion as string;
    const meta = objAt(value, ['metadata']);
    this.name = (meta.name ?? meta.generateName) as string;
    this.namespace = typeof meta.namespace === 'string' && meta.namespace !== '' ? meta.namespace : undefined;
  }

  /** `Kind/namespace/name`; the namespace is left out for an object that has none. */
  get id(): string {
    return `${this.kind}/${this.namespace ? `${this.namespace}/` : ''}${this.name}`;
  }

  get file(): string {
    return this.doc.source.name;
  }

  /** The line of a field of this object (of its deepest existing part). */
  line(path: Path): number {
    return lineOfField(this.doc, [...this.prefix, ...path]);
  }

  get labels(): Obj {
    return objAt(this.value, ['metadata', 'labels']);
  }

  get annotations(): Obj {
    return objAt(this.value, ['metadata', 'annotations']);
  }

  /** Same namespace, where both name one (a chart rendered without --namespace names none). */
  sameNamespace(other: LintObject): boolean {
    return this.namespace === undefined || other.namespace === undefined || this.namespace === other.namespace;
  }
}

/** What makes a document a Kubernetes object: apiVersion, kind and metadata.name (or generateName). */
function kubernetesProblem(v: unknown): string | null {
  const problem = kubernetesObjectProblem(v, 'accepted');
  if (!problem) return null;
  return 'notAMap' in problem ? problem.notAMap : `is not a Kubernetes object (${problem.missing.join(', ')} required)`;
}

/**
 * The Kubernetes objects of the documents, a List's items each as its own object. An empty document
 * is skipped; a document that is not an object is a ManifestReadError naming its file and line.
 */
export function objectsOf(docs: readonly ManifestDocument[]): LintObject[] {
  const out: LintObject[] = [];
  for (const doc of docs) {
    if (doc.value === null || doc.value === undefined) continue;
    const problem = kubernetesProblem(doc.value);
    if (problem) throw new ManifestReadError([{ line: lineOfField(doc, []), message: `document ${doc.index} ${problem}` }], doc.source.name);
    const value = doc.value as Obj;
    if (value.kind === 'List') {
      listAt(value, ['items']).forEach((item, i) => {
        const itemProblem = kubernetesProblem(item);
        if (itemProblem)
          throw new ManifestReadError(
            [{ line: lineOfField(doc, ['items', i]), message: `document ${doc.index}, items[${i}] ${itemProblem}` }],
            doc.source.name,
          );
        out.push(new LintObject(item as Obj, doc, ['items', i]));
      });
    } else {
      out.push(new LintObject(value, doc));
    }
  }
  return out;
}

/**
 * A label selector (matchLabels and matchExpressions, or a Service's plain map) against labels. An
 * empty selector matches nothing, except where the API says it matches every pod (a policy/v1
 * PodDisruptionBudget, a NetworkPolicy's podSelector): `emptyMatchesAll`.
 */
export function selectorMatches(selector: unknown, labels: Obj, options: { plain?: boolean; emptyMatchesAll?: boolean } = {}): boolean {
  if (!isObject(selector)) return false;
  if (options.plain) {
    const entries = Object.entries(selector);
    return entries.length > 0 && entries.every(([k, v]) => labels[k] === v);
  }
  const matchLabels = objAt(selector, ['matchLabels']);
  const expressions = listAt(selector, ['matchExpressions']);
  if (Object.keys(matchLabels).length === 0 && expressions.length === 0) return options.emptyMatchesAll === true;
  if (!Object.entries(matchLabels).every(([k, v]) => labels[k] === v)) return false;
  return expressions.every((e) => {
    if (!isObject(e) || typeof e.key !== 'string') return false;
    const values = listAt(e, ['values']);
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    switch (e.operator) {
      case 'In':
        return has && values.includes(labels[e.key]);
      case 'NotIn':
        return !has || !values.includes(labels[e.key]);
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
      default:
        return false;
    }
  });
}
