import { z } from 'zod';
import { DurationError, parseDurationSeconds } from '../duration';

/** A duration field: seconds as a number, or a string with a unit; always seconds after parsing. */
export const duration = z
  .union([z.number(), z.string()])
  .transform((value, ctx) => {
    try {
      return parseDurationSeconds(value);
    } catch (err) {
      if (!(err instanceof DurationError)) throw err;
      ctx.addIssue({ code: 'custom', message: err.message });
      return z.NEVER;
    }
  });

/** A TCP port. */
export const port = z.int().min(1).max(65535);
