/**
 * Streams Envoy access logs into an AccessLogSummary: one chunk at a time, never the whole file,
 * so memory stays flat whatever the size (bench/measure-bench.ts measures it on 1 GB). An input is
 * a file or standard input (`-`), plain or gzip-compressed, holding what `kubectl logs -c
 * istio-proxy` prints (with or without its --prefix and --timestamps): Envoy's access log among
 * pilot-agent's and Envoy's own lines. Each file's format is decided by its first access-log line, wherever it is; every other
 * line is skipped and counted by its shape, and an access-log line whose duration cannot be
 * measured is counted as invalid. Only input without a single access-log line is an error, naming
 * the first file and line.
 */
import * as fs from 'node:fs';
import { pipeline, Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import { readLine, type LogFormat } from '../measure/access-log';
import { AccessLogSummary } from '../measure/p99-report';
import { withoutKubectlPrefixes, type KubectlPrefixes } from '../measure/kubectl-prefix';
import { withoutBom } from '../core/bom';
import { GracegateError } from '../core/errors';
import { compression, encodingProblem } from '../core/text-encoding';
import { readProblem } from '../core/read-input';

/** A longer line is no access-log line (Istio's lines are well under 2 KB): skipped, bounded memory. */
export const MAX_LINE_BYTES = 64 * 1024;
const CHUNK_BYTES = 1024 * 1024;
/** Enough of an input's start to tell gzip, UTF-16 or binary from text. */
const HEAD_BYTES = 1024;

/** `--access-log -`: standard input, as `kubectl logs ... | gracegate measure p99 --access-log -`. */
export const STDIN = '-';

export class AccessLogError extends GracegateError {}

function preview(line: string): string {
  const text = line.length > 120 ? `${line.slice(0, 120)}...` : line;
  return JSON.stringify(text);
}

/** The first line of a file that holds something, for the message when no file holds an access log. */
type FirstLine = { file: string; line: number; text: string };

/** An input's first bytes (up to HEAD_BYTES, fewer at its end) and the rest of it, still unread. */
async function peek(chunks: AsyncIterable<Buffer>): Promise<{ head: Buffer; all: AsyncIterable<Buffer> }> {
  const it = chunks[Symbol.asyncIterator]();
  const taken: Buffer[] = [];
  let size = 0;
  let done = false;
  while (size < HEAD_BYTES && !done) {
    const next = await it.next();
    if (next.done) done = true;
    else {
      taken.push(next.value);
      size += next.value.length;
    }
  }
  const head = Buffer.concat(taken);
  async function* all(): AsyncGenerator<Buffer> {
    if (head.length > 0) yield head;
    if (done) return;
    for (let next = await it.next(); !next.done; next = await it.next()) yield next.value;
  }
  return { head, all: all() };
}

/** The name an input has in messages and the fix's command. */
const nameOf = (input: string) => (input === STDIN ? 'standard input' : input);

/** A reader's own problem with an input: what it is, and how to give it to measure instead. */
function unreadable(input: string, what: string, convert: string | undefined): AccessLogError {
  const pipe = convert
    ? `: ${convert.replaceAll('FILE', input === STDIN ? '<the file>' : input)} | gracegate measure p99 --access-log -`
    : ': give the access log itself (kubectl logs -c istio-proxy, plain or gzip-compressed)';
  return new AccessLogError(`is ${what}; measure reads UTF-8 text, plain or gzip-compressed${pipe}`, nameOf(input));
}

/**
 * The text of one input, a chunk at a time and never whole: a file or standard input, gunzipped
 * through node's zlib stream when it starts with gzip's magic number (whatever its name). What is
 * no text measure reads (UTF-16, another compression, binary) is an AccessLogError naming the fix.
 */
async function* textOf(input: string): AsyncGenerator<string> {
  let raw: Readable;
  if (input === STDIN) raw = process.stdin;
  else {
    try {
      if (fs.statSync(input).isDirectory()) throw Object.assign(new Error('EISDIR'), { code: 'EISDIR' });
      raw = fs.createReadStream(input, { highWaterMark: CHUNK_BYTES });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'EISDIR') throw new AccessLogError(`is a directory; give the log files in it (${input}/*.log)`, input);
      throw new AccessLogError(readProblem(e), input);
    }
  }
  try {
    const outer = await peek(raw);
    let bytes: AsyncIterable<Buffer> = outer.all;
    if (compression(outer.head)?.name === 'gzip') {
      // The gunzip stream is destroyed with any error of the source: the loop below sees it.
      bytes = pipeline(Readable.from(outer.all), createGunzip(), () => undefined);
    }
    const inner = await peek(bytes);
    const problem = encodingProblem(inner.head);
    if (problem) throw unreadable(input, problem.what, problem.convert);
    const decoder = new StringDecoder('utf8');
    for await (const chunk of inner.all) yield decoder.write(chunk);
    const tail = decoder.end();
    if (tail) yield tail;
  } catch (err) {
    raw.destroy();
    if (err instanceof GracegateError) throw err;
    const e = err as NodeJS.ErrnoException;
    // zlib's errors: a truncated or corrupt gzip file.
    if (e.code === 'Z_BUF_ERROR' || e.code === 'Z_DATA_ERROR' || /unexpected end of file/.test(e.message))
      throw new AccessLogError(`gzip: ${e.message} (a truncated or corrupt file: copy it again, or check it with gzip -t)`, nameOf(input));
    throw new AccessLogError(readProblem(e), nameOf(input));
  }
}

async function readOne(
  input: string,
  summary: AccessLogSummary,
  prefixes: KubectlPrefixes,
): Promise<{ format: LogFormat | null; first: FirstLine | null; lines: number }> {
  const file = nameOf(input);
  let format: LogFormat | null = null;
  let first: FirstLine | null = null;
  let lines = 0;
  let lineNo = 0;
  let rest = '';
  let overlong = false;
  let started = false;
  const take = (raw: string) => {
    lineNo++;
    if (raw.length === 0 || raw.trim() === '') return;
    lines++;
    first ??= { file, line: lineNo, text: raw };
    const line = withoutKubectlPrefixes(raw, prefixes);
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
  for await (const piece of textOf(input)) {
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
  if (overlong) skipOverlong();
  else if (rest.length > 0) take(rest);
  return { format, first, lines };
}

/**
 * Reads every file in turn into one summary; returns the formats seen. Throws AccessLogError when
 * the files hold lines but not one of them is an access-log line (a pod without traffic beside
 * pods with some is no error: its file only adds skipped lines).
 */
export async function readAccessLogs(files: readonly string[], summary: AccessLogSummary): Promise<{ formats: LogFormat[]; prefixes: KubectlPrefixes }> {
  if (files.filter((f) => f === STDIN).length > 1) throw new AccessLogError("'-' (standard input) given twice");
  const formats = new Set<LogFormat>();
  const prefixes: KubectlPrefixes = { prefix: 0, timestamps: 0 };
  let first: FirstLine | null = null;
  let lines = 0;
  for (const file of files) {
    const read = await readOne(file, summary, prefixes);
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
  return { formats: [...formats], prefixes };
}
