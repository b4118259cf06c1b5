/**
 * The state file: written atomically (temporary file, fsync, rename) on every transition, so a
 * restarted sidecar resumes a started sequence instead of answering 200 again. Thanks to the rename
 * a reader sees the old or the new file, never half of one; a file that is unreadable anyway (edited
 * by hand, times a Date cannot hold or dated ahead of the clock) or of another format version
 * (types.ts, STATE_FILE_VERSION) is not trusted: logged as an error, and the sidecar answers FAULT
 * until Envoy has said whether the drain was sent (machine.ts, `checkDrain`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { readBounded, STATE_FILE_MAX_BYTES } from '../core/bounded-read';
import { GracegateError, inputMessage } from '../core/errors';
import { makeDirs } from '../core/make-dirs';
import { FLOWS, STATES, TERMINATION_EVENTS, type EventKey } from '../contract/hc';
import { STATE_FILE_VERSION, type Logger, type PersistedState, type StateStore } from './types';

/**
 * How far ahead of the clock a recorded time may be: a wall clock stepped back (NTP) between two
 * runs of the sidecar (a restart takes seconds) leaves times slightly in the future; NTP slews
 * offsets below 128 ms and steps larger ones, and a minute is beyond what a healthy node steps.
 * Anything later was not written by this clock: the file is not trusted (a day ahead used to be
 * resumed, and /wait-closed then waited out the whole grace period).
 */
export const MAX_FUTURE_MS = 60 * 1000;

/** The persisted shape, with every time an epoch-ms the sidecar can resume from and print. */
function persistedSchema(now: number) {
  const time = z
    .number()
    .min(0, { message: 'a time before 1970' })
    .max(now + MAX_FUTURE_MS, { message: `a time more than ${MAX_FUTURE_MS / 1000} s ahead of the clock` });
  const mark = z.object({ at: time, estimated: z.boolean(), note: z.string().optional() }).nullable();
  const events = Object.fromEntries(TERMINATION_EVENTS.map((e) => [e.key, mark])) as Record<EventKey, typeof mark>;
  return z.object({
    version: z.literal(STATE_FILE_VERSION, { message: `written in another format (this sidecar reads version ${STATE_FILE_VERSION})` }),
    state: z.enum(STATES),
    enteredAt: time,
    reason: z.string(),
    flow: z.enum(FLOWS).nullable(),
    sequenceStartedAt: time.nullable(),
    bufferStartedAt: time.nullable(),
    drainAckedAt: time.nullable(),
    drainTimedOut: z.boolean(),
    events: z.object(events),
    history: z.array(z.object({ state: z.enum(STATES), at: time, reason: z.string() })),
  });
}

/** The state file path names something that is not a regular file; the sidecar must not start. */
export class StateFileError extends GracegateError {}

/**
 * The state file is replaced by a rename on every transition, so it must be a regular file (or not
 * exist yet): `--state-file /dev/zero` run as root replaced the device node with a JSON file.
 */
export function checkStateFilePath(file: string): void {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new StateFileError(`state file ${file}: ${(err as Error).message}`);
  }
  if (!stat.isFile()) throw new StateFileError(`state file ${file}: exists and is not a regular file; the sidecar replaces it on every transition`);
}

export const UNTRUSTED_LOG = 'the state file cannot be trusted; FAULT until Envoy says whether the drain was sent';

export function fileStateStore(file: string, log: Logger, now: () => number = Date.now): StateStore {
  let untrusted: string | null = null;
  const refuse = (error: string): undefined => {
    untrusted = error.slice(0, 300);
    log('error', UNTRUSTED_LOG, { file, error: untrusted });
    return undefined;
  };
  return {
    untrusted: () => untrusted,
    load() {
      untrusted = null;
      let text: string;
      try {
        text = readBounded(file, STATE_FILE_MAX_BYTES, 'the state file');
      } catch (err) {
        // No file: the first start, or one removed; either way Envoy is asked (machine.ts).
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        return refuse(`cannot read: ${(err as Error).message}`);
      }
      try {
        const result = persistedSchema(now()).safeParse(JSON.parse(text), { error: inputMessage });
        if (result.success) return result.data as PersistedState;
        return refuse(result.error.issues.map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`).join('; '));
      } catch (err) {
        return refuse((err as Error).message);
      }
    },
    save(state) {
      checkStateFilePath(file);
      makeDirs(path.dirname(file));
      const tmp = `${file}.${process.pid}.tmp`;
      const fd = fs.openSync(tmp, 'w', 0o644);
      try {
        fs.writeSync(fd, `${JSON.stringify(state)}\n`);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(tmp, file);
    },
  };
}

/** For tests and for running without a file. */
export function memoryStateStore(initial?: PersistedState): StateStore & { saved: PersistedState[] } {
  const saved: PersistedState[] = initial ? [structuredClone(initial)] : [];
  return {
    saved,
    load: () => (saved.length > 0 ? structuredClone(saved[saved.length - 1]!) : undefined),
    untrusted: () => null,
    save: (state) => {
      saved.push(structuredClone(state));
    },
  };
}
