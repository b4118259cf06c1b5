import { z } from 'zod';
import { duration } from '../model/spec-fields';

/**
 * `spec.traffic.longLived`: the streams and long-lived connections the gateway carries, and what
 * their clients do when one ends. Optional: without it the plan treats traffic as requests
 * bounded by `longRequestP99Seconds`. What the plan does with it: src/plan/long-lived.ts;
 * what Envoy does to each kind in a drain: docs/long-lived.md.
 */
export const LONG_LIVED_KINDS = ['websocket', 'grpc-stream', 'sse', 'tcp'] as const;
export type LongLivedKind = (typeof LONG_LIVED_KINDS)[number];

export const longLivedSchema = z.strictObject({
  /** Which kinds of long-lived traffic exist (tcp: a Gateway server with protocol TCP/TLS passthrough). */
  kinds: z
    .array(z.enum(LONG_LIVED_KINDS))
    .min(1, 'list at least one kind')
    .refine((k) => new Set(k).size === k.length, 'a kind is listed twice')
    .describe('websocket | grpc-stream | sse | tcp: the long-lived traffic the gateway carries'),
  /**
   * The clients reconnect when their stream or connection ends (close, reset, GOAWAY) and resume
   * without losing a message (a sequence number, SSE's Last-Event-ID). Required: the plan differs.
   */
  clientsReconnect: z.boolean().describe('true: clients reconnect when a stream ends and resume where they were; false: an ended stream is a failure'),
  /** How long a client tolerates being without its stream while it reconnects. Omitted: not checked. */
  reconnectToleranceSeconds: duration
    .refine((s) => s > 0, 'must be above 0')
    .optional()
    .describe('how long a client may be without its stream while it reconnects; omitted: not checked'),
  /**
   * The longest a stream may live: the plan has Envoy end streams at this age (max_stream_duration,
   * tcp_proxy max_downstream_connection_duration), so they rotate and a drain can wait for them.
   * Omitted: streams live until something cuts them (a termination).
   */
  maxStreamLifetimeSeconds: duration
    .refine((s) => s >= 10, 'must be at least 10s')
    .optional()
    .describe('the age at which Envoy ends a stream (rotation); omitted: no limit, streams are cut by terminations'),
});

export type LongLivedSpec = z.output<typeof longLivedSchema>;
