/**
 * One `gracegate verify` run (the I/O half; summary.ts counts): check that the target answers,
 * drive a bounded load at it, run the user's termination command at a set time, keep the load
 * going until the termination is over (the observe command's exit plus a tail, or the whole
 * duration), and return every request record. Nothing but the URL given is ever contacted.
 */
import { spawn } from 'node:child_process';
import { GracegateError } from '../core/errors';
import { LoadGenerator, sendOne, type Paths, type RequestRecord } from './load';
import { scenarioLoad, type VerifyScenario } from './mixes';

export type VerifyOptions = {
  url: URL;
  terminate: string;
  observe?: string;
  durationMs: number;
  terminateAtMs: number;
  tailMs: number;
  ratePerSecond: number;
  connections: number;
  requestTimeoutMs: number;
  scenario: VerifyScenario;
  /** S1's long request (S4's stream lasts as long). */
  longMs: number;
  /** Path templates on the URL's origin: `{ms}`; `{chunks}` and `{intervalMs}`. Without them every request GETs the URL. */
  slowPath?: string;
  streamPath?: string;
  headers: Record<string, string>;
  insecure: boolean;
  /** Ctrl-C: ends the run early, with the partial report. */
  signal?: AbortSignal;
  /** --pod-state: started once the target answers, stopped when the load has ended. */
  podState?: { start(): void; stop(): Promise<void> };
};

/** A command the user gave (--terminate, --observe) and how it ended, ms after the load started. */
export type CommandRun = { flag: string; command: string; startMs: number; endMs: number | null; code: number | null; signal: string | null; output: string };

export type VerifyRun = {
  records: RequestRecord[];
  paths: Paths;
  loadStartMs: number;
  loadEndMs: number;
  /** Epoch ms the termination command started; null when the run ended before it. */
  terminationAt: number | null;
  terminate: CommandRun | null;
  observe: CommandRun | null;
  /** Why the load stopped. */
  stoppedBy: 'duration' | 'observe' | 'interrupt';
};

/** What the preflight request and the commands keep of their output: the tail a message quotes. */
const OUTPUT_TAIL_BYTES = 4096;
/** How long a command's last output is waited for after it exited. */
const OUTPUT_SETTLE_MS = 200;
/** The preflight request's bound: an LB that takes longer to answer one request is not ready for a load. */
export const PREFLIGHT_TIMEOUT_MS = 5000;

/** The request paths for `url` and the templates (a template's placeholders filled per request). */
export function verifyPaths(url: URL, slowPath?: string, streamPath?: string): Paths {
  const plain = `${url.pathname}${url.search}`;
  return {
    slow: (ms) => (slowPath === undefined ? plain : slowPath.replaceAll('{ms}', String(ms))),
    stream: (chunks, intervalMs) =>
      streamPath === undefined ? plain : streamPath.replaceAll('{chunks}', String(chunks)).replaceAll('{intervalMs}', String(intervalMs)),
  };
}

/** One request before any load: the target must answer 200, or the run stops with why (exit 2). */
async function preflight(o: VerifyOptions, paths: Paths): Promise<void> {
  const rec = await sendOne(o.url.origin, paths, { kind: 'slow', ms: 50 }, false, PREFLIGHT_TIMEOUT_MS, 0, { headers: o.headers, insecure: o.insecure });
  const where = `--url ${o.url.href}`;
  switch (rec.outcome) {
    case 'ok':
      return;
    case 'ECONNREFUSED':
      throw new GracegateError(`${where}: connection refused: nothing listens there (check the address, the port and that the LB forwards it)`);
    case 'timeout':
      throw new GracegateError(`${where}: no answer within ${PREFLIGHT_TIMEOUT_MS / 1000} s (unreachable, or a firewall drops the packets)`);
    case 'ECONNRESET':
      throw new GracegateError(`${where}: the connection was reset before any answer (a TLS port spoken to in plain HTTP, or an LB with no server up?)`);
    default:
      if (rec.outcome.startsWith('http-'))
        throw new GracegateError(
          `${where}: answered HTTP ${rec.outcome.slice(5)} before any termination; point it (and --slow-path/--stream-path) at something that answers 200, so that every failure during the run is the termination's`,
        );
      throw new GracegateError(`${where}: ${rec.outcome.replace(/^error-/, '')} (host not found, TLS or address problem)`);
  }
}

/**
 * Runs `command` in a shell, keeping the tail of its output; `kill` ends it and what it started
 * (SIGTERM to its process group). Never rejects: the CommandRun says how it ended.
 */
function runCommand(flag: string, command: string, base: number): { done: Promise<CommandRun>; kill: () => void } {
  const startMs = Date.now() - base;
  // A process group of its own: stopping it stops what the shell started too (kubectl under sh -c).
  const child = spawn('/bin/sh', ['-c', command], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const keep = (c: Buffer): void => {
    output = (output + c.toString('utf8')).slice(-OUTPUT_TAIL_BYTES);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const done = new Promise<CommandRun>((resolve) => {
    child.on('error', (err) => resolve({ flag, command, startMs, endMs: Date.now() - base, code: null, signal: null, output: err.message }));
    child.on('exit', (code, signal) => {
      const endMs = Date.now() - base;
      // The last output may still be in the pipes; something the shell left running may hold them open: wait a little, bounded.
      const settle = (): void => resolve({ flag, command, startMs, endMs, code, signal, output: output.trim() });
      const timer = setTimeout(settle, OUTPUT_SETTLE_MS);
      child.on('close', () => {
        clearTimeout(timer);
        settle();
      });
    });
  });
  const kill = (): void => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  };
  return { done, kill };
}

const sleepUntil = (atMs: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(done, Math.max(0, atMs - Date.now()));
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** A command that failed, as the error the CLI prints (exit 2): the flag, the command, how it ended, its last output. */
export function commandFailure(c: CommandRun): GracegateError {
  const how = c.code !== null ? `exited ${c.code}` : c.signal !== null ? `was killed by ${c.signal}` : 'could not start';
  const tail = c.output === '' ? '' : `; its last output: ${c.output.split('\n').slice(-5).join(' | ')}`;
  return new GracegateError(`${c.flag} '${c.command}' ${how}${tail}. The load was stopped; no report was made, since the termination did not run as given`);
}

/** The run: preflight, load, the termination and its observation, the tail. Throws GracegateError for what the user must fix. */
export async function runVerify(o: VerifyOptions): Promise<VerifyRun> {
  const paths = verifyPaths(o.url, o.slowPath, o.streamPath);
  await preflight(o, paths);
  const scenario = scenarioLoad(o.scenario, o.longMs);
  // A stream's chunks are counted only on a path that streams them: without --stream-path, none.
  const mix = scenario.mix.filter((m) => m.spec.kind !== 'stream' || o.streamPath !== undefined);
  const single = scenario.single;
  const load = new LoadGenerator({
    baseUrl: o.url.origin,
    paths,
    workers: o.connections,
    durationMs: o.durationMs,
    mix,
    requestTimeoutMs: o.requestTimeoutMs,
    ratePerSecond: o.ratePerSecond,
    headers: o.headers,
    insecure: o.insecure,
  });
  o.podState?.start();
  const loadStartMs = Date.now();
  const end = loadStartMs + o.durationMs;
  let stoppedBy: VerifyRun['stoppedBy'] = 'duration';
  const interrupted = (): void => {
    stoppedBy = 'interrupt';
    load.cancel();
  };
  o.signal?.addEventListener('abort', interrupted, { once: true });
  const running = load.run();
  const cancelSingle = new AbortController();
  o.signal?.addEventListener('abort', () => cancelSingle.abort(), { once: true });
  let singleDone: Promise<RequestRecord | null> = Promise.resolve(null);
  let terminate: CommandRun | null = null;
  let observe: CommandRun | null = null;
  let terminationAt: number | null = null;
  let failure: GracegateError | null = null;
  const children: Array<() => void> = [];
  const killChildren = (): void => children.forEach((k) => k());
  o.signal?.addEventListener('abort', killChildren, { once: true });
  try {
    if (single) {
      // Its own connection, one second before the termination: in flight when the pod leaves.
      await sleepUntil(loadStartMs + Math.max(0, o.terminateAtMs - 1000), o.signal);
      if (!o.signal?.aborted) {
        singleDone = sendOne(o.url.origin, paths, single.spec, false, Math.max(o.requestTimeoutMs, o.longMs * 2), -1, {
          headers: o.headers,
          insecure: o.insecure,
          signal: cancelSingle.signal,
        }).then((r) => ({ ...r, label: single.label }));
      }
    }
    await sleepUntil(loadStartMs + o.terminateAtMs, o.signal);
    if (!o.signal?.aborted) {
      terminationAt = Date.now();
      const t = runCommand('--terminate', o.terminate, loadStartMs);
      children.push(t.kill);
      const bound = setTimeout(t.kill, Math.max(0, end - Date.now()));
      terminate = await t.done;
      clearTimeout(bound);
      // Still running at the end of the duration (kubectl delete waiting for the pod): the load is
      // over, the command was stopped, and the report says so; that is not the command failing.
      if (terminate.code !== 0 && !o.signal?.aborted && Date.now() < end) failure = commandFailure(terminate);
    }
    if (failure === null && o.observe !== undefined && !o.signal?.aborted) {
      const w = runCommand('--observe', o.observe, loadStartMs);
      children.push(w.kill);
      // The observation ends with the duration: a termination that outlasts it is reported as not observed.
      const bound = setTimeout(w.kill, Math.max(0, end - Date.now()));
      observe = await w.done;
      clearTimeout(bound);
      if (Date.now() < end && !o.signal?.aborted) {
        if (observe.code !== 0) failure = commandFailure(observe);
        else {
          await sleepUntil(Math.min(end, Date.now() + o.tailMs), o.signal);
          if (stoppedBy === 'duration' && Date.now() < end) stoppedBy = 'observe';
          load.stop();
        }
      }
    }
    if (failure !== null) load.cancel();
  } finally {
    killChildren();
  }
  const result = await running;
  const singleRecord = await singleDone;
  const loadEndMs = Date.now();
  await o.podState?.stop();
  if (failure !== null) throw failure;
  return {
    records: singleRecord ? [...result.records, singleRecord] : result.records,
    paths,
    loadStartMs,
    loadEndMs,
    terminationAt,
    terminate,
    observe,
    stoppedBy,
  };
}
