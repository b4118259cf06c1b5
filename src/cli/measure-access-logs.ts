/**
 * Streams Envoy access logs into an AccessLogSummary: one chunk at a time, never the whole file,
 * so memory stays flat whatever the size (bench/measure-bench.ts measures it on 1 GB). Each file's
 * format is read from its first line; a file that is neither of Istio's formats is an error naming
 * the file and line, and a later line that does not parse is skipped and reported.
 */
import * as fs from 'node:fs';
import { detectFormat, parseLine, type LogFormat } from '../measure/access-log';
import { AccessLogSummary } from '../measure/p99-report';
import { GracegateError } from '../core/errors';
import { readProblem } from './read-input';

/** A longer line is no access-log line (Istio's lines are well under 2 KB): skipped, bounded memory. */
export const MAX_LINE_BYTES = 64 * 1024;
const CHUNK_BYTES = 1024 * 1024;

export class AccessLogError extends GracegateError {}

function preview(line: string): string {
  const text = line.length > 120 ? `${line.slice(0, 120)}...` : line;
  return JSON.stringify(text);
}

async function readOne(file: string, summary: AccessLogSummary): Promise<LogFormat | null> {
  let stream: fs.ReadStream;
  try {
    const stat = fs.statSync(file);
    if (stat.isDirectory()) throw Object.assign(new Error('EISDIR'), { code: 'EISDIR' });
    stream = fs.createReadStream(file, { encoding: 'utf8', highWaterMark: CHUNK_BYTES });
  } catch (err) {
    throw new AccessLogError(readProblem(err as NodeJS.ErrnoException), file);
  }
  let format: LogFormat | null = null;
  let lineNo = 0;
  let rest = '';
  let overlong = false;
  const take = (line: string) => {
    lineNo++;
    if (line.length === 0 || line.trim() === '') return;
    if (format === null) {
      format = detectFormat(line);
      if (format === null) {
        throw new AccessLogError(
          [
            {
              line: lineNo,
              message: `not an Envoy access-log line in Istio's text or JSON format (--access-log reads Istio's default formats, docs/measure.md): ${preview(line)}`,
            },
          ],
          file,
        );
      }
    }
    const entry = parseLine(format, line);
    if (entry) summary.add(entry);
    else summary.skip(`${file}:${lineNo}`);
  };
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      let start = 0;
      let nl = chunk.indexOf('\n');
      while (nl !== -1) {
        if (overlong) {
          overlong = false;
          lineNo++;
          summary.skip(`${file}:${lineNo}`);
        } else {
          take(rest + chunk.slice(start, nl));
        }
        rest = '';
        start = nl + 1;
        nl = chunk.indexOf('\n', start);
      }
      if (!overlong) {
        rest += chunk.slice(start);
        if (rest.length > MAX_LINE_BYTES) {
          overlong = true;
          rest = '';
        }
      }
    }
  } catch (err) {
    stream.destroy();
    if (err instanceof GracegateError) throw err;
    throw new AccessLogError(readProblem(err as NodeJS.ErrnoException), file);
  }
  if (overlong) summary.skip(`${file}:${lineNo + 1}`);
  else if (rest.length > 0) take(rest);
  return format;
}

/** Reads every file in turn into one summary; returns the formats seen. */
export async function readAccessLogs(files: readonly string[], summary: AccessLogSummary): Promise<LogFormat[]> {
  const formats = new Set<LogFormat>();
  for (const file of files) {
    const format = await readOne(file, summary);
    if (format) formats.add(format);
  }
  return [...formats];
}
