/** How gracegate writes a document: no folding of long strings, lists as helm's toYaml and kubectl write them. */
export const YAML_OUTPUT = { lineWidth: 0, indentSeq: false } as const;
