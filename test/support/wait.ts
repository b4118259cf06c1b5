/**
 * The suite's one wait: polls a check until it gives a value, bounded. Every rig waits through it
 * (the hc tests, the harness, the cluster), each with its own poll interval.
 */

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Thrown by a check when waiting longer cannot help (the process it waits for has exited): waitFor rethrows it at once. */
export class GiveUp extends Error {}

/** What a check gives while the event has not happened yet. */
type NotYet = undefined | false;

/**
 * Polls `check` every `everyMs` until it returns something other than undefined or false, and
 * returns that; throws after `timeoutMs` naming `what` and the check's last error, if it threw, or
 * at once when the check throws GiveUp.
 */
export async function waitFor<T>(what: string, timeoutMs: number, check: () => T | NotYet | Promise<T | NotYet>, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as T;
    } catch (err) {
      if (err instanceof GiveUp) throw err;
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ''}`);
    }
    await sleep(everyMs);
  }
}
