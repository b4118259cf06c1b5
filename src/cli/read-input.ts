import { readFileSync } from 'node:fs';
import { GracegateError } from '../errors';

/** The errno codes a user meets naming a file, in words: the code alone says little to most people. */
const IN_WORDS: Record<string, string> = {
  ENOENT: 'no such file',
  EISDIR: 'it is a directory; give the file in it',
  EACCES: 'permission denied',
  ENOTDIR: 'a part of the path is a file, not a directory',
};

function readProblem(err: NodeJS.ErrnoException): string {
  const words = err.code !== undefined ? IN_WORDS[err.code] : undefined;
  return `cannot read: ${err.code ?? err.message}${words ? ` (${words})` : ''}`;
}

/** A file the user named (a spec, a rendered manifest), as text; a GracegateError naming the path otherwise. */
export function readInputFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new GracegateError(readProblem(err as NodeJS.ErrnoException), path);
  }
}
