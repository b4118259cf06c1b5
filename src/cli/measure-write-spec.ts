/**
 * `--write SPEC`: puts the measured value into `spec.traffic.longRequestP99Seconds` of a spec file,
 * keeping its comments and layout: the yaml package's Document API finds the value's place in the
 * source, and only those characters are replaced (re-printing the document would realign every
 * trailing comment). A spec without the field gets it through the Document API. The edited text
 * is validated as a whole spec before anything is written, and the file is replaced by a rename, so
 * a bad spec or a failed write leaves it as it was.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isMap, isScalar, parseDocument } from 'yaml';
import { SPEC_MAX_BYTES } from '../core/bounded-read';
import { GracegateError } from '../core/errors';
import { parseGatewaySpec } from '../schema/parse-spec';
import { readInputFile } from '../core/read-input';

export const P99_FIELD = ['spec', 'traffic', 'longRequestP99Seconds'] as const;
export const DURATIONS_FIELD = ['spec', 'traffic', 'requestDurations'] as const;

/**
 * Writes `seconds` into the spec, and `durations` (the measured request lengths the plan ranks its
 * orders by) beside it when given; returns the previous p99 (undefined when there was none).
 */
export function writeLongRequestP99(specPath: string, seconds: number, durations?: string | null): unknown {
  const text = readInputFile(specPath, SPEC_MAX_BYTES);
  const doc = parseDocument(text, { keepSourceTokens: false });
  if (doc.errors.length > 0)
    throw new GracegateError(
      doc.errors.map((e) => ({ line: e.linePos?.[0].line, message: e.message })),
      specPath,
    );
  if (!isMap(doc.contents)) throw new GracegateError([{ path: '', message: 'not a gateway spec (the document is not a mapping)' }], specPath);
  const node = doc.getIn(P99_FIELD, true);
  const previous = isScalar(node) ? node.value : node;
  let edited = replaceScalar(text, doc, P99_FIELD, seconds);
  if (durations) {
    const again = parseDocument(edited, { keepSourceTokens: false });
    edited = isScalar(again.getIn(DURATIONS_FIELD, true)) ? replaceScalar(edited, again, DURATIONS_FIELD, durations) : besideP99(edited, again, durations);
  }
  // The whole spec must still be valid (a spec that was broken before stays unwritten).
  parseGatewaySpec(edited, specPath);
  const tmp = path.join(path.dirname(specPath), `.${path.basename(specPath)}.gracegate-${process.pid}`);
  try {
    fs.writeFileSync(tmp, edited, { mode: fs.statSync(specPath).mode & 0o777 });
    fs.renameSync(tmp, specPath);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw new GracegateError(`cannot write: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, specPath);
  }
  return previous;
}

/** `text` with the scalar at `at` replaced by `value` in place, or set through the Document API where absent. */
function replaceScalar(text: string, doc: ReturnType<typeof parseDocument>, at: readonly string[], value: number | string): string {
  const node = doc.getIn(at, true);
  if (isScalar(node) && node.range) {
    const [start, valueEnd] = node.range;
    return `${text.slice(0, start)}${typeof value === 'string' ? JSON.stringify(value) : value}${text.slice(valueEnd)}`;
  }
  doc.setIn(at, value);
  return doc.toString();
}

/**
 * `text` with spec.traffic.requestDurations as a line of its own right after the p99's line, at the
 * p99's indentation (a block mapping), so no other line moves; through the Document API where the
 * p99 is not on a line of its own.
 */
function besideP99(text: string, doc: ReturnType<typeof parseDocument>, durations: string): string {
  const p99 = doc.getIn(P99_FIELD, true);
  if (isScalar(p99) && p99.range) {
    const lineStart = text.lastIndexOf('\n', p99.range[0]) + 1;
    const indent = /^\s*/.exec(text.slice(lineStart))![0];
    const lineEnd = text.indexOf('\n', p99.range[0]);
    if (/^\s*longRequestP99Seconds:/.test(text.slice(lineStart)) && lineEnd >= 0)
      return `${text.slice(0, lineEnd + 1)}${indent}requestDurations: ${JSON.stringify(durations)}\n${text.slice(lineEnd + 1)}`;
  }
  doc.setIn(DURATIONS_FIELD, durations);
  return doc.toString();
}
