/**
 * What a file that is not UTF-8 text is, named for the user with the command that makes it text.
 * gracegate reads UTF-8 (YAML 1.2 allows UTF-16 too, but no Kubernetes tool writes it); a spec saved
 * as UTF-16 by a Windows editor, or PowerShell's `>` (UTF-16 by default before PowerShell 7), used to
 * come out as "kind: required", and a compressed log as "not an access-log line".
 */

/**
 * Why the bytes are not text gracegate reads, and the command that prints them as UTF-8 text (FILE
 * for the file), where one does: each reader says where to send it.
 */
export type EncodingProblem = { what: string; convert?: string };

/** Signatures of the compressed formats people hand over (each format's own magic number). */
const COMPRESSED: ReadonlyArray<{ name: string; magic: readonly number[]; convert: string }> = [
  { name: 'gzip', magic: [0x1f, 0x8b], convert: 'gzip -dc FILE' },
  { name: 'zstd', magic: [0x28, 0xb5, 0x2f, 0xfd], convert: 'zstd -dc FILE' },
  { name: 'xz', magic: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], convert: 'xz -dc FILE' },
  { name: 'bzip2', magic: [0x42, 0x5a, 0x68], convert: 'bzip2 -dc FILE' },
  { name: 'zip', magic: [0x50, 0x4b, 0x03, 0x04], convert: 'unzip -p FILE' },
];

const startsWith = (bytes: Uint8Array, magic: readonly number[]) => magic.every((b, i) => bytes[i] === b);

/** A compressed format by its magic number, or undefined. */
export function compression(bytes: Uint8Array): (typeof COMPRESSED)[number] | undefined {
  return COMPRESSED.find((c) => bytes.length >= c.magic.length && startsWith(bytes, c.magic));
}

const FROM_UTF16 = 'iconv -f UTF-16 -t UTF-8 FILE';

/**
 * From the first bytes of an input (a KiB is plenty): UTF-16 (a byte-order mark, or a NUL in every
 * other byte, as ASCII text in UTF-16 has), compressed, or binary (any other NUL). Undefined for
 * what may be UTF-8 text.
 */
export function encodingProblem(head: Uint8Array): EncodingProblem | undefined {
  if (startsWith(head, [0xff, 0xfe]) || startsWith(head, [0xfe, 0xff]))
    return { what: 'UTF-16 text (it starts with a UTF-16 byte-order mark)', convert: FROM_UTF16 };
  const packed = compression(head);
  if (packed) return { what: `${packed.name}-compressed`, convert: packed.convert };
  const sample = head.subarray(0, 1024);
  const nulAt = sample.indexOf(0);
  if (nulAt < 0) return undefined;
  const even = sample.filter((_, i) => i % 2 === 0);
  const odd = sample.filter((_, i) => i % 2 === 1);
  const mostlyNul = (half: Uint8Array) => half.length > 0 && half.filter((b) => b === 0).length >= half.length * 0.9;
  if (mostlyNul(even) || mostlyNul(odd)) return { what: 'UTF-16 text (a NUL byte in every other byte)', convert: FROM_UTF16 };
  return { what: `binary data, not text (a NUL byte at offset ${nulAt})` };
}

/** The offset of the first byte that breaks UTF-8, or -1 when all of it is UTF-8. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!;
    const length = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (length === 0 || i + length > bytes.length) return i;
    for (let k = 1; k < length; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return i;
    // Overlong three- and four-byte forms, surrogates and code points past U+10FFFF.
    const second = bytes[i + 1]!;
    if ((b === 0xe0 && second < 0xa0) || (b === 0xed && second > 0x9f) || (b === 0xf0 && second < 0x90) || (b === 0xf4 && second > 0x8f)) return i;
    i += length;
  }
  return -1;
}

/** The 1-based line of an offset in bytes. */
export function lineOfOffset(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++;
  return line;
}

/**
 * Whole input read into memory (a spec, manifests, a config): why it is not UTF-8 text, with the
 * line of the first byte that is not, or undefined.
 */
export function wholeTextProblem(bytes: Uint8Array): EncodingProblem | undefined {
  const head = encodingProblem(bytes.subarray(0, 1024));
  if (head) return head;
  const bad = firstInvalidUtf8(bytes);
  if (bad < 0) return undefined;
  return {
    what: `not UTF-8 text (byte 0x${bytes[bad]!.toString(16).padStart(2, '0')} on line ${lineOfOffset(bytes, bad)})`,
    convert: 'iconv -f LATIN1 -t UTF-8 FILE (LATIN1: the encoding it was written in)',
  };
}
