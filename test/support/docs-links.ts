/**
 * Generated blocks are written with links relative to the repository's root (as the README reads
 * them); a page under docs/ holds the same block with its links relative to docs/.
 */
import { join } from 'node:path';
import { REPO_ROOT } from './repo';

/** docs/proof.md: the evidence the README's one proof table stands beside (the end-to-end, load and long-lived blocks). */
export const PROOF_DOC = join(REPO_ROOT, 'docs', 'proof.md');

/** Markdown links of a root-relative block, made relative to docs/: `](docs/x)` -> `](x)`, `](test/x)` -> `](../test/x)`. */
export function forDocsDir(block: string): string {
  return block.replace(/\]\((?!https?:|#|mailto:)([^)\s]+)\)/g, (_, target: string) => `](${target.startsWith('docs/') ? target.slice(5) : `../${target}`})`);
}
