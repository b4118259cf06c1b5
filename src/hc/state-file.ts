/**
 * The state file: written atomically (temporary file, fsync, rename) on every transition, so a
 * restarted sidecar resumes a started sequence instead of answering 200 again. Thanks to the rename
 * a reader sees the old or the new file, never half of one; a file that is unreadable anyway (edited
 * by hand, another version) is logged as an error and the sidecar starts fresh.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { STATES } from './states';
import type { Logger, PersistedState, StateStore } from './types';

const mark = z.object({ at: z.number(), estimated: z.boolean(), note: z.string().optional() }).nullable();

const persistedSchema = z.object({
  version: z.literal(1),
  state: z.enum(STATES),
  enteredAt: z.number(),
  reason: z.string(),
  flow: z.enum(['drain-first', 'health-first', 'soft-drain', 'manual']).nullable(),
  sequenceStartedAt: z.number().nullable(),
  bufferStartedAt: z.number().nullable(),
  drainAckedAt: z.number().nullable(),
  drainTimedOut: z.boolean(),
  events: z.array(mark).length(6),
  history: z.array(z.object({ state: z.enum(STATES), at: z.number(), reason: z.string() })),
});

export function fileStateStore(file: string, log: Logger): StateStore {
  return {
    load() {
      let text: string;
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log('error', 'cannot read the state file; starting fresh', { file, error: (err as Error).message });
        return undefined;
      }
      try {
        return persistedSchema.parse(JSON.parse(text)) as PersistedState;
      } catch (err) {
        log('error', 'the state file is not valid; starting fresh', { file, error: (err as Error).message.slice(0, 300) });
        return undefined;
      }
    },
    save(state) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
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
    save: (state) => {
      saved.push(structuredClone(state));
    },
  };
}
