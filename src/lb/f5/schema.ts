import { z } from 'zod';
import { duration, vendorDuration } from '../../model/spec-fields';

/** tmsh `ltm monitor http`: `interval [integer]`, `timeout [integer]`, whole seconds (lb-config rounds up). */
const monitorSeconds = (name: string) =>
  vendorDuration(
    (s) => s > 0,
    (s) => `F5 takes ${name} in whole seconds (tmsh ltm monitor http: ${name} [integer]); ${s}s is no ${name}: give at least 1s`,
  );

/** F5 BIG-IP LTM: HTTP monitor and the pool's Action On Service Down. */
export const f5Schema = z
  .strictObject({
    model: z.literal('f5'),
    /** @default 5s (F5 HTTP monitor default). */
    interval: monitorSeconds('interval').default(5).describe('HTTP monitor interval; F5 default 5 s'),
    /** DOWN when no valid response arrived within this time. @default 16s (3 x interval + 1). */
    timeout: monitorSeconds('timeout').default(16).describe('HTTP monitor timeout; F5 default 16 s (3 x interval + 1)'),
    /** @default none: existing flows continue when a member goes DOWN (F5 default). */
    serviceDownAction: z.enum(['none', 'reset', 'drop', 'reselect']).default('none').describe('Pool service-down-action; F5 default none'),
    /**
     * Pool slow-ramp-time: a member that comes back gets a growing share of new connections over this
     * time. @default 10s (F5 pool default).
     */
    slowRampTime: duration.default(10).describe('Pool slow-ramp-time; F5 default 10 s: a returning member ramps up to its share over it'),
    /**
     * Pool reselect-tries: how many other members BIG-IP tries after a member refuses a connection
     * ("Maximum number of attempts to find a responsive member for a connection", F5 AS3 schema).
     * @default 0 (F5 default): no other member, the client connection is reset.
     */
    reselectTries: z
      .int()
      .min(0)
      .max(65535)
      .default(0)
      .describe('Pool reselect-tries: other members tried after a member refuses a connection; F5 default 0 (the client gets the reset)'),
    /** Monitor receive-disable string: a body containing it marks the member disabled (graceful signal). */
    recvDisable: z.string().min(1).optional().describe('HTTP monitor recv-disable string (graceful signal: member disabled, existing connections continue)'),
  })
  .superRefine((lb, ctx) => {
    if (lb.timeout <= lb.interval) {
      ctx.addIssue({
        code: 'custom',
        path: ['timeout'],
        message: `F5 timeout (${lb.timeout}s) must exceed interval (${lb.interval}s); F5 recommends 3 x interval + 1`,
      });
    }
  });

export type F5Lb = z.output<typeof f5Schema>;
