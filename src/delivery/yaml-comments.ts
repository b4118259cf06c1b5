import { Document, isMap, isScalar, isSeq, type ToStringOptions } from 'yaml';

/**
 * YAML with comments where generated files need them: `before` a key (its own line above it) or
 * `after` a scalar value (at the end of its line). A path that the value does not have is skipped,
 * so one comment table serves every variant of a file.
 */
export type YamlComment = { path: ReadonlyArray<string | number>; before?: string; after?: string };

/** `defaultMode` is decimal in the API; people read file modes in octal. */
export function octalMode(mode: number): string {
  return ` ${mode.toString(8).padStart(4, '0')} in octal: ${mode === 0o444 ? 'read-only for owner, group and others' : 'file mode'} (the API takes decimal)`;
}

export function commentedYaml(value: unknown, comments: readonly YamlComment[], options: ToStringOptions = { lineWidth: 0 }): string {
  const doc = new Document(value);
  for (const c of comments) {
    const parent = doc.getIn(c.path.slice(0, -1) as unknown[], true) ?? (c.path.length === 1 ? doc.contents : undefined);
    const last = c.path[c.path.length - 1];
    if (c.before !== undefined) {
      if (isMap(parent)) {
        const pair = parent.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === last);
        if (pair && isScalar(pair.key)) pair.key.commentBefore = ` ${c.before}`;
      } else if (isSeq(parent) && typeof last === 'number') {
        const item = parent.items[last];
        if (item && typeof item === 'object' && 'commentBefore' in item) (item as { commentBefore?: string }).commentBefore = ` ${c.before}`;
      }
    }
    if (c.after !== undefined) {
      const node = doc.getIn(c.path as unknown[], true);
      if (isScalar(node)) node.comment = c.after.startsWith(' ') ? c.after : ` ${c.after}`;
    }
  }
  return doc.toString(options);
}
