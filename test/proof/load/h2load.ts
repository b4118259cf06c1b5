/**
 * HTTP/2 clients: `h2load` (nghttp2's load generator, Debian's nghttp2-client) on HAProxy's
 * `proto h2` bind, for a fixed duration, a fixed request rate per client. h2load counts requests
 * by outcome and status, not by id.
 */
import { spawn } from 'node:child_process';

export type H2loadSummary = { total: number; succeeded: number; failed: number; errored: number; timeout: number; status2xx: number; status5xx: number };

export function parseH2load(out: string): H2loadSummary | null {
  const rq = /requests: (\d+) total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(out);
  const st = /status codes: (\d+) 2xx, \d+ 3xx, \d+ 4xx, (\d+) 5xx/.exec(out);
  if (!rq || !st) return null;
  return {
    total: Number(rq[1]),
    succeeded: Number(rq[2]),
    failed: Number(rq[3]),
    errored: Number(rq[4]),
    timeout: Number(rq[5]),
    status2xx: Number(st[1]),
    status5xx: Number(st[2]),
  };
}

/** Runs h2load for `seconds`; resolves with its summary (null when it printed none) and output. */
export function runH2load(
  url: string,
  seconds: number,
  clients: number,
  rpsPerClient: number,
): { done: Promise<{ summary: H2loadSummary | null; output: string }>; kill: () => void } {
  const child = spawn('h2load', ['-c', String(clients), '-m', '8', '--rps', String(rpsPerClient), '-D', String(seconds), url], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    output += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    output += c;
  });
  const onExit = () => child.kill('SIGKILL');
  process.on('exit', onExit);
  const done = new Promise<{ summary: H2loadSummary | null; output: string }>((resolve) =>
    child.once('exit', () => {
      process.off('exit', onExit);
      resolve({ summary: parseH2load(output), output });
    }),
  );
  return { done, kill: () => child.kill('SIGKILL') };
}
