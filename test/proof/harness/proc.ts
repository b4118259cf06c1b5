/**
 * Child processes of an end-to-end run: each in its own process group (so a kill reaches its
 * children too), output kept in memory with arrival times, and every one killed when the test
 * process exits, whatever happened.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { sleep, waitFor } from '../../support/wait';

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
  /** When the process exited (epoch ms), null while it runs. */
  exitedAtMs: number | null = null;
  private readonly child: ChildProcess;
  private readonly lineListeners: Array<(line: OutputLine) => void> = [];

  constructor(
    readonly name: string,
    command: string,
    args: string[],
    env: NodeJS.ProcessEnv = {},
  ) {
    this.child = spawn(command, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    live.add(this.child);
    for (const stream of ['stdout', 'stderr'] as const) {
      let rest = '';
      this.child[stream]!.setEncoding('utf8').on('data', (chunk: string) => {
        const atMs = Date.now();
        const parts = (rest + chunk).split('\n');
        rest = parts.pop()!;
        for (const text of parts) {
          const line = { atMs, stream, text };
          this.output.push(line);
          for (const l of this.lineListeners) l(line);
        }
      });
    }
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

  tail(lines = 30): string {
    return this.output
      .slice(-lines)
      .map((l) => `[${this.name} ${l.stream}] ${l.text}`)
      .join('\n');
  }
}

/** Ports for child processes: the suite's one picker (reserved machine-wide, below the ephemeral range). */
export { freePort } from '../../support/ports';

/** The suite's one wait and sleep (test/support/wait.ts). */
export { sleep, waitFor };
