import { readBounded } from './bounded-read';
import { GracegateError } from './errors';

/** The errno codes a user meets naming a file, in words: the code alone says little to most people. */
const IN_WORDS: Record<string, string> = {
  ENOENT: 'no such file',
  EISDIR: 'it is a directory; give the file in it',
  EACCES: 'permission denied',
  ENOTDIR: 'a part of the path is a file, not a directory',
};

/** `cannot read: ENOENT (no such file)`: the errno code and, for the common ones, what it means. */
export function readProblem(err: NodeJS.ErrnoException): string {
  const words = err.code !== undefined ? IN_WORDS[err.code] : undefined;
  return `cannot read: ${err.code ?? err.message}${words ? ` (${words})` : ''}`;
}

/**
 * A file the user named (a spec, a rendered manifest), as text, at most `maxBytes` (src/core/bounded-read.ts:
 * `plan /dev/zero` must not grow without bound); a GracegateError naming the path otherwise. `what`
 * names the file in the too-large message.
 */
export function readInputFile(path: string, maxBytes: number, what: string = path): string {
  try {
    return readBounded(path, maxBytes, what);
  } catch (err) {
    if (err instanceof GracegateError) throw err; // InputTooLargeError: names the input and the limit
    throw new GracegateError(readProblem(err as NodeJS.ErrnoException), path);
  }
}
