/**
 * The suite's one daemon launcher: every process a test starts and stops (HAProxy, Prometheus,
 * Envoy, the sidecar, the apps) is a Proc: in its own process group (a kill reaches its children
 * too), its output kept in memory with arrival times, killed when the test process exits whatever
 * happened. startDaemon starts one and waits, bounded, until it is ready.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { GiveUp, waitFor } from './wait';

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) killGroup(child, 'SIGKILL');
});
// An interrupted run (Ctrl-C, a runner's SIGTERM) does not reach 'exit' by itself: without this,
// its HAProxy and pods outlive it and hold their ports.
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.once(signal, () => process.exit(code));
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

export type OutputLine = { atMs: number; stream: 'stdout' | 'stderr'; text: string };

export class Proc {
  readonly output: OutputLine[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * Resolves once the process exited and its stdout and stderr were read to their end: 'exit' can
   * come before the last of a large write is read from the pipe (a child that keeps the pipe open
   * holds this, so wait on it only where the process has no children of its own).
   */
  readonly drained: Promise<void>;
  /** When the process exited (epoch ms), null while it runs. */
  exitedAtMs: number | null = null;
  private readonly child: ChildProcess;
  private readonly lineListeners: Array<(line: OutputLine) => void> = [];

  /** `stdoutFd`: the process writes its stdout to that file, not to a pipe (nothing is kept of it). */
  constructor(
    readonly name: string,
    command: string,
    args: string[],
    env: NodeJS.ProcessEnv = {},
    stdoutFd?: number,
  ) {
    this.child = spawn(command, args, { detached: true, stdio: ['ignore', stdoutFd ?? 'pipe', 'pipe'], env: { ...process.env, ...env } });
    live.add(this.child);
    for (const stream of ['stdout', 'stderr'] as const) {
      if (!this.child[stream]) continue;
      // A line's pieces until its newline comes: joined once, so a line of megabytes (a load's
      // result) costs its length, not a copy of everything before it for every chunk.
      const pieces: string[] = [];
      this.child[stream]!.setEncoding('utf8').on('data', (chunk: string) => {
        const atMs = Date.now();
        if (!chunk.includes('\n')) {
          pieces.push(chunk);
          return;
        }
        const parts = chunk.split('\n');
        parts[0] = pieces.join('') + parts[0];
        pieces.length = 0;
        pieces.push(parts.pop()!);
        for (const text of parts) {
          const line = { atMs, stream, text };
          this.output.push(line);
          for (const l of this.lineListeners) l(line);
        }
      });
    }
    this.drained = new Promise((resolve) => this.child.once('close', () => resolve()));
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exitedAtMs = Date.now();
        live.delete(this.child);
        resolve({ code, signal });
      });
    });
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  onLine(listener: (line: OutputLine) => void): void {
    this.lineListeners.push(listener);
  }

  signal(signal: NodeJS.Signals): void {
    killGroup(this.child, signal);
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  async stop(graceMs = 2000): Promise<void> {
    if (!this.running) return;
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Everything the process wrote to stderr so far, one line per line. */
  stderrText(): string {
    return this.output
      .filter((l) => l.stream === 'stderr')
      .map((l) => `${l.text}\n`)
      .join('');
  }

  tail(lines = 30): string {
    return this.output
      .slice(-lines)
      .map((l) => `[${this.name} ${l.stream}] ${l.text}`)
      .join('\n');
  }
}

/**
 * Starts `argv` and resolves once `ready()` says so (polled, a throw counts as not yet), within
 * `withinMs`; gives up at once if it exits. A daemon that exits first, or is not ready in time, is stopped, and the error carries
 * its last output.
 */
export async function startDaemon(
  name: string,
  argv: readonly string[],
  ready: () => Promise<boolean>,
  options: { withinMs: number; env?: NodeJS.ProcessEnv; stdoutFd?: number; everyMs?: number },
): Promise<Proc> {
  const proc = new Proc(name, argv[0]!, argv.slice(1), options.env, options.stdoutFd);
  try {
    await waitFor(
      `${name} ready`,
      options.withinMs,
      async () => {
        if (!proc.running) throw new GiveUp(`${name} exited before it was ready`);
        return (await ready()) ? true : undefined;
      },
      options.everyMs ?? 50,
    );
  } catch (err) {
    await proc.stop();
    throw new Error(`${(err as Error).message}${proc.output.length > 0 ? `\n${proc.tail()}` : ''}`);
  }
  return proc;
}
