/**
 * Streams Envoy access logs into an AccessLogSummary: one chunk at a time, never the whole file,
 * so memory stays flat whatever the size (bench/measure-bench.ts measures it on 1 GB). A file is
 * what `kubectl logs -c istio-proxy` prints: Envoy's access log among pilot-agent's and Envoy's own
 * lines. Each file's format is decided by its first access-log line, wherever it is; every other
 * line is skipped and counted by its shape, and an access-log line whose duration cannot be
 * measured is counted as invalid. Only input without a single access-log line is an error, naming
 * the first file and line.
 */
import * as fs from 'node:fs';
import { readLine, type LogFormat } from '../measure/access-log';
import { AccessLogSummary } from '../measure/p99-report';
import { withoutBom } from '../core/bom';
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

/** The first line of a file that holds something, for the message when no file holds an access log. */
type FirstLine = { file: string; line: number; text: string };

async function readOne(file: string, summary: AccessLogSummary): Promise<{ format: LogFormat | null; first: FirstLine | null; lines: number }> {
  let stream: fs.ReadStream;
  try {
    const stat = fs.statSync(file);
    if (stat.isDirectory()) throw Object.assign(new Error('EISDIR'), { code: 'EISDIR' });
    stream = fs.createReadStream(file, { encoding: 'utf8', highWaterMark: CHUNK_BYTES });
  } catch (err) {
    throw new AccessLogError(readProblem(err as NodeJS.ErrnoException), file);
  }
  let format: LogFormat | null = null;
  let first: FirstLine | null = null;
  let lines = 0;
  let lineNo = 0;
  let rest = '';
  let overlong = false;
  let started = false;
  const take = (line: string) => {
    lineNo++;
    if (line.length === 0 || line.trim() === '') return;
    lines++;
    first ??= { file, line: lineNo, text: line };
    const read = readLine(line, format);
    if (read.kind === 'skipped') return summary.skip(read.shape, `${file}:${lineNo}`);
    format ??= read.format;
    if (read.kind === 'invalid') summary.invalid(read.reason, `${file}:${lineNo}`);
    else summary.add(read.entry);
  };
  const skipOverlong = () => {
    lineNo++;
    lines++;
    summary.skip('overlong', `${file}:${lineNo}`);
  };
  try {
    for await (const piece of stream as AsyncIterable<string>) {
      // A byte-order mark opens the file, not its first line (src/core/bom.ts, as for a spec).
      const chunk = started ? piece : withoutBom(piece);
      started = true;
      let start = 0;
      let nl = chunk.indexOf('\n');
      while (nl !== -1) {
        if (overlong) {
          overlong = false;
          skipOverlong();
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
  if (overlong) skipOverlong();
  else if (rest.length > 0) take(rest);
  return { format, first, lines };
}

/**
 * Reads every file in turn into one summary; returns the formats seen. Throws AccessLogError when
 * the files hold lines but not one of them is an access-log line (a pod without traffic beside
 * pods with some is no error: its file only adds skipped lines).
 */
export async function readAccessLogs(files: readonly string[], summary: AccessLogSummary): Promise<LogFormat[]> {
  const formats = new Set<LogFormat>();
  let first: FirstLine | null = null;
  let lines = 0;
  for (const file of files) {
    const read = await readOne(file, summary);
    if (read.format) formats.add(read.format);
    first ??= read.first;
    lines += read.lines;
  }
  if (first !== null && summary.accessLogLines === 0) {
    const proxyOnly = [...summary.skippedByShape.keys()].every((shape) => shape === 'pilot-agent' || shape === 'envoy');
    throw new AccessLogError(
      [
        {
          line: first.line,
          message: `not an Envoy access-log line in Istio's text or JSON format, and neither is any other of the ${lines} line(s) read (--access-log reads Istio's default formats, docs/measure.md)${
            proxyOnly ? ": only pilot-agent's and Envoy's own lines; is the access log on (meshConfig accessLogFile, or a Telemetry resource)?" : ''
          }: ${preview(first.text)}`,
        },
      ],
      first.file,
    );
  }
  return [...formats];
}
