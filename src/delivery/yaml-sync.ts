import { isMap, isScalar, isSeq, type Document, type Node } from 'yaml';

/**
 * Brings a parsed YAML document in line with a JSON value, changing only the nodes whose value
 * differs. So an object edited as JSON (by `applyPodChanges`, the one implementation of the pod
 * changes) is written back with its key order, quoting and comments intact wherever its content is.
 * Returns whether anything changed.
 */
export function syncDocument(doc: Document, value: unknown): boolean {
  if (doc.contents && sameShape(doc.contents, value)) return syncNode(doc, doc.contents, value);
  doc.contents = doc.createNode(value) as Document['contents'];
  return true;
}

/** The same for the node at `path` (an item of a `kind: List`: `['items', 3]`). */
export function syncDocumentAt(doc: Document, path: readonly (string | number)[], value: unknown): boolean {
  const node = doc.getIn(path, true);
  if (node && sameShape(node, value)) return syncNode(doc, node as Node, value);
  doc.setIn(path, doc.createNode(value));
  return true;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function sameShape(node: unknown, value: unknown): boolean {
  if (isMap(node)) return isPlainObject(value);
  if (isSeq(node)) return Array.isArray(value);
  return isScalar(node) && (value === null || typeof value !== 'object');
}

function keyOf(pairKey: unknown): unknown {
  return isScalar(pairKey) ? pairKey.value : pairKey;
}

function syncNode(doc: Document, node: Node, value: unknown): boolean {
  if (isMap(node)) {
    const target = value as Record<string, unknown>;
    let changed = false;
    for (let i = node.items.length - 1; i >= 0; i--) {
      const key = keyOf(node.items[i]!.key);
      if (typeof key !== 'string' || !(key in target)) {
        node.items.splice(i, 1);
        changed = true;
      }
    }
    for (const [key, v] of Object.entries(target)) {
      const pair = node.items.find((p) => keyOf(p.key) === key);
      if (!pair) {
        node.items.push(doc.createPair(key, v));
        changed = true;
      } else if (pair.value && sameShape(pair.value, v)) {
        changed = syncNode(doc, pair.value as Node, v) || changed;
      } else {
        pair.value = doc.createNode(v);
        changed = true;
      }
    }
    return changed;
  }
  if (isSeq(node)) {
    const target = value as unknown[];
    let changed = node.items.length !== target.length;
    node.items.splice(target.length);
    target.forEach((v, i) => {
      const item = node.items[i];
      if (item !== undefined && sameShape(item, v)) changed = syncNode(doc, item as Node, v) || changed;
      else {
        node.items[i] = doc.createNode(v);
        changed = true;
      }
    });
    return changed;
  }
  if (isScalar(node) && node.toJSON() !== value) {
    node.value = value;
    // A quoted style chosen for a string is wrong for a number and vice versa: let yaml pick.
    if (typeof value !== 'string') delete node.type;
    return true;
  }
  return false;
}
