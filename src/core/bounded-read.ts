/**
 * Reading a file (or stdin) with a size limit. `readFileSync` reads whatever it is given:
 * `--state-file /dev/zero` or `plan /dev/zero` grew to gigabytes and aborted.
 * Each input has its limit here, far above what a real one holds, and a larger one is refused
 * before it is parsed.
 */
import * as fs from 'node:fs';
import { withoutBom } from './bom';
import { GracegateError } from './errors';
import { wholeTextProblem } from './text-encoding';

/** The sidecar's state file: six events and at most 50 history entries, a few KiB. */
export const STATE_FILE_MAX_BYTES = 64 * 1024;
/** The sidecar's JSON config, as synth writes it: about 1 KiB. */
export const HC_CONFIG_MAX_BYTES = 64 * 1024;
/** A GracefulGateway spec: about 2 KiB with comments. */
export const SPEC_MAX_BYTES = 1024 * 1024;
/**
 * Rendered manifests (post-render's stdin, the Argo CD plugin's rendered file or helm's output): a
 * gateway chart renders tens of KiB. The YAML parser holds about 30 times the text (measured: 8 MiB
 * of manifests, 246 MB resident), so 16 MiB stays around half a gigabyte.
 */
export const MANIFESTS_MAX_BYTES = 16 * 1024 * 1024;

/** The input is larger than its limit; the message names it and the limit (exit 2 from the CLI). */
export class InputTooLargeError extends GracegateError {}

/** The input is not UTF-8 text (UTF-16, compressed, binary); the message names what it is and the fix. */
export class NotTextError extends GracegateError {}

function describe(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MiB` : `${bytes / 1024} KiB`;
}

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Reads `source` (a path, or a file descriptor such as 0 for stdin) as UTF-8 without a leading
 * byte-order mark (src/core/bom.ts), at most `maxBytes`.
 * Throws InputTooLargeError beyond, NotTextError for what is not UTF-8 text (src/core/text-encoding.ts),
 * and the usual ErrnoException when it cannot be read. `what`
 * names the input in the message.
 */
export function readBounded(source: string | number, maxBytes: number, what: string): string {
  const fd = typeof source === 'number' ? source : fs.openSync(source, 'r');
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    const buffer = Buffer.allocUnsafe(64 * 1024);
    for (;;) {
      let n: number;
      try {
        n = fs.readSync(fd, buffer, 0, buffer.length, null);
      } catch (err) {
        // A non-blocking stdin with nothing yet: wait for more, as a blocking read would.
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
          sleep(5);
          continue;
        }
        throw err;
      }
      if (n === 0) break;
      total += n;
      if (total > maxBytes) throw new InputTooLargeError(`${what} is larger than ${describe(maxBytes)}, the most gracegate reads there`);
      chunks.push(Buffer.from(buffer.subarray(0, n)));
    }
    const bytes = Buffer.concat(chunks);
    const problem = wholeTextProblem(bytes);
    if (problem) {
      const file = typeof source === 'string' ? source : 'FILE';
      const fix = problem.convert ? `convert it: ${problem.convert.replaceAll('FILE', file)} > ${file}.txt` : 'give the text it was made from';
      throw new NotTextError(`${what} is ${problem.what}; gracegate reads UTF-8 text: ${fix}`);
    }
    return withoutBom(bytes.toString('utf8'));
  } finally {
    if (typeof source !== 'number') fs.closeSync(fd);
  }
}
