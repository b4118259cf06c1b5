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

/** Writes `seconds` into the spec; returns the previous value (undefined when there was none). */
export function writeLongRequestP99(specPath: string, seconds: number): unknown {
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
  let edited: string;
  if (isScalar(node) && node.range) {
    const [start, valueEnd] = node.range;
    edited = `${text.slice(0, start)}${seconds}${text.slice(valueEnd)}`;
  } else {
    doc.setIn(P99_FIELD, seconds);
    edited = doc.toString();
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
