import { z } from 'zod';
import { vendorCount, vendorDuration } from '../../model/spec-fields';

/** HAProxy's check-interval parser refuses a delay <= 0 (src/check.c, srv_parse_check_inter and its twins). */
const checkInterval = (keyword: string) =>
  vendorDuration(
    (s) => s > 0,
    (s) => `HAProxy refuses ${keyword} ${s}s: a check interval must be > 0 (HAProxy src/check.c)`,
  );

/** rise and fall: HAProxy refuses a count <= 0 and keeps it in an int (src/check.c; include/haproxy/check-t.h). */
const checkCount = (keyword: string) =>
  vendorCount(1, 2 ** 31 - 1, (n) =>
    n < 1
      ? `HAProxy refuses ${keyword} ${n}: '${keyword}' has to be > 0 (HAProxy src/check.c)`
      : `HAProxy refuses ${keyword} ${n}: it is kept in an int, at most 2147483647 (HAProxy include/haproxy/check-t.h)`,
  );

/** HAProxy backend: `server … check inter … fall …` and friends. */
export const haproxySchema = z.strictObject({
  model: z.literal('haproxy'),
  /** @default 2s (HAProxy default). */
  inter: checkInterval('inter').default(2).describe('server inter; HAProxy default 2000 ms'),
  /** Interval while the server is transitioning (after a failed check). @default inter. */
  fastinter: checkInterval('fastinter').optional().describe('server fastinter; HAProxy default = inter'),
  /** Interval while DOWN (recovery only). @default inter. */
  downinter: checkInterval('downinter').optional().describe('server downinter; HAProxy default = inter'),
  /** @default 3 (HAProxy default). */
  fall: checkCount('fall').default(3).describe('server fall; HAProxy default 3'),
  /** @default 2 (HAProxy default). */
  rise: checkCount('rise').default(2).describe('server rise; HAProxy default 2'),
  /** @default none: sessions survive DOWN (HAProxy default); shutdown-sessions kills them. */
  onMarkedDown: z.enum(['none', 'shutdown-sessions']).default('none').describe('server on-marked-down; HAProxy default none'),
  /** Connection retries to a server. @default 3 (HAProxy default). */
  retries: z.int().min(0).default(3).describe('retries; HAProxy default 3'),
  /** `option redispatch`: re-send a refused connection to another server. @default false. */
  redispatch: z.boolean().default(false).describe('option redispatch; HAProxy default off'),
  /** `http-check disable-on-404`: a 404 puts the server in NOLB (graceful signal). @default false. */
  disableOn404: z.boolean().default(false).describe('http-check disable-on-404; HAProxy default off'),
  /**
   * `retry-on conn-failure empty-response` with `http-request disable-l7-retry unless METH_GET`: a
   * GET or HEAD that meets HTTP/1's keep-alive race (the server closed the connection under it, no
   * answer) is retried; other methods never are. @default false (HAProxy retries connects only).
   */
  retryOnEmptyResponse: z.boolean().default(false).describe('retry-on conn-failure empty-response, GET/HEAD only; HAProxy default off'),
  /**
   * `option http-server-close`: a new connection to the pod for every request (the client side stays
   * keep-alive). Omitted: lb-config writes it for drain-first, where a reused connection would carry
   * one more request after the drain (docs/envoy.md), and leaves HAProxy's keep-alive for the other
   * orders. `false`: the servers keep HAProxy's keep-alive whatever the order; the plan then waits
   * for two requests per connection (finding drain-first-connection-reuse).
   */
  httpServerClose: z
    .boolean()
    .optional()
    .describe('option http-server-close (no keep-alive to the pod); default: written for drain-first, HAProxy keep-alive otherwise'),
});

export type HaproxyLb = z.output<typeof haproxySchema>;
