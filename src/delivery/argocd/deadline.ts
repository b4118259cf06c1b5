/**
 * The whole of `gracegate argocd generate` has a deadline under Argo CD's, and says which step ran
 * out. helm is a child process and is stopped by its own timeout (helm.ts); gracegate's own
 * steps run on the main thread, where no timer fires until a step returns. So a watchdog thread
 * waits on shared memory: when the command finishes it is told and ends; at the deadline (plus a
 * second, so that helm's timeout speaks first) it writes which step was running on stderr, which
 * argocd-cmp-server puts in the Application's condition, and kills the process. Every step is
 * bounded on its own (docs/delivery.md, "Bounds"); this is the guarantee that holds if one is not.
 */
import { Worker } from 'node:worker_threads';
import { DurationError, parseDurationSeconds } from '../../core/duration';
import { GracegateError } from '../../core/errors';

/**
 * Argo CD's repo-server gives a whole manifest request 60 s by default
 * (`controller.repo.server.timeout.seconds`), fetching the repository and sending it to the plugin
 * included; 50 s leaves it 10.
 */
export const DEFAULT_DEADLINE_SECONDS = 50;
export const DEADLINE_ENV = 'GRACEGATE_TIMEOUT';

/** The watchdog's own code (eval'd: the bundle has no file for it). Shared cells: [0] the step, [1] done. */
const WATCHDOG = `
const { workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const cells = new Int32Array(workerData.buffer);
if (Atomics.wait(cells, 1, 0, workerData.ms) === 'timed-out') {
  const step = workerData.steps[Atomics.load(cells, 0)] ?? 'an unknown step';
  writeSync(2, workerData.prefix + step + workerData.suffix + '\\n');
  process.kill(workerData.pid, 'SIGKILL');
}
`;

/**
 * A time setting from the environment: a plain number is seconds, or a duration with its unit;
 * `fallback` when unset; a GracegateError naming the variable when it is not a duration above 0.
 */
export function secondsFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text.trim() === '') return fallback;
  try {
    const seconds = parseDurationSeconds(/^\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : text);
    if (seconds > 0) return seconds;
  } catch (err) {
    if (!(err instanceof DurationError)) throw err;
    throw new GracegateError(`${name}=${text}: ${err.message}`);
  }
  throw new GracegateError(`${name}=${text}: must be above 0`);
}

export const deadlineSeconds = (env: NodeJS.ProcessEnv): number => secondsFromEnv(env, DEADLINE_ENV, DEFAULT_DEADLINE_SECONDS);

/** What the command tells its watchdog. */
export type Deadline = {
  /** Epoch ms. */
  readonly at: number;
  /** The step now running (one of the names given at the start). */
  step(name: string): void;
  /** The command is done: the watchdog ends. */
  stop(): void;
};

/** Starts the watchdog for `seconds`; `steps` are every step name the command will report. */
export function startDeadline(seconds: number, steps: readonly string[], prefix: string): Deadline {
  const at = Date.now() + seconds * 1000;
  const cells = new Int32Array(new SharedArrayBuffer(8));
  const worker = new Worker(WATCHDOG, {
    eval: true,
    workerData: {
      buffer: cells.buffer,
      // A second after the deadline: helm, stopped at the deadline, is reported by its own message.
      ms: seconds * 1000 + 1000,
      steps,
      pid: process.pid,
      prefix: `${prefix}: `,
      suffix: ` did not finish within ${seconds}s, the deadline of the whole command inside Argo CD's 60 s repo-server timeout; nothing was written (${DEADLINE_ENV} sets it, docs/delivery.md)`,
    },
    stdout: false,
    stderr: false,
  });
  worker.unref();
  return {
    at,
    step(name) {
      const i = steps.indexOf(name);
      Atomics.store(cells, 0, i < 0 ? steps.length : i);
    },
    stop() {
      Atomics.store(cells, 1, 1);
      Atomics.notify(cells, 1);
    },
  };
}
