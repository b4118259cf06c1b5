/**
 * A byte-order mark (U+FEFF) at the start of a file: Windows editors and PowerShell's `>` write
 * one. It is no content, and gracegate reads every user file the same way whatever wrote it: a
 * spec, a rendered manifest and an access log alike lose it here, and nowhere else.
 */
export const BOM = '\uFEFF';

/** The text without a leading byte-order mark. */
export function withoutBom(text: string): string {
  return text.startsWith(BOM) ? text.slice(1) : text;
}
