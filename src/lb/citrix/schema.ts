import { z } from 'zod';
import { vendorCount, vendorDuration } from '../../model/spec-fields';

/**
 * A monitor time: NITRO's lbmonitor takes 1 to `max` of the monitor's unit; gracegate writes whole
 * seconds in SEC and anything finer in MSEC (src/lb-config/citrix.ts), so a time with a fraction of
 * a second must fit `max` milliseconds.
 */
const monitorTime = (flag: string, max: number) =>
  vendorDuration(
    (s) => s > 0 && (Number.isInteger(s) || Math.round(s * 1000) <= max),
    (s) =>
      s <= 0
        ? `NetScaler refuses ${flag} ${s}: its minimum value is 1 (NITRO lbmonitor)`
        : `NetScaler refuses ${flag} ${Math.round(s * 1000)} MSEC: its maximum value is ${max} (NITRO lbmonitor); give whole seconds`,
  );
const monitorCount = (flag: string, min: number, max: number) =>
  vendorCount(min, max, (n) => `NetScaler refuses ${flag} ${n}: its range is ${min} to ${max} (NITRO lbmonitor)`);

/** Citrix NetScaler: `add lb monitor <name> HTTP …` and the service's `downStateFlush`. */
export const citrixSchema = z
  .strictObject({
    model: z.literal('citrix'),
    /** Probe interval. @default 5s (Citrix default; must exceed resptimeout). */
    interval: monitorTime('-interval', 20_940_000).default(5).describe('Monitor -interval; Citrix default 5 s; must exceed resptimeout'),
    /** Response timeout of one probe. @default 2s (Citrix default). */
    resptimeout: monitorTime('-resptimeout', 20_939_000).default(2).describe('Monitor -resptimeout; Citrix default 2 s'),
    /** Consecutive failed probes before DOWN. @default 3 (Citrix default). */
    retries: monitorCount('-retries', 1, 127).default(3).describe('Monitor -retries; Citrix default 3'),
    /** @default 0: all `retries` probes must fail (Citrix default). */
    failureRetries: monitorCount('-failureRetries', 0, 32).default(0).describe('Monitor -failureRetries; Citrix default 0 (all retries must fail)'),
    /** @default 1 (Citrix default). */
    successRetries: monitorCount('-successRetries', 1, 32).default(1).describe('Monitor -successRetries; Citrix default 1'),
    /** Time a DOWN service waits before it is probed again (recovery only). @default 30s. */
    downTime: monitorTime('-downTime', 20_939_000).default(30).describe('Monitor -downTime; Citrix default 30 s (recovery only)'),
    /** Response codes that mean UP. @default [200]. */
    respCode: z.array(z.int().min(100).max(599)).min(1).default([200]).describe('Monitor -respCode: HTTP codes meaning UP'),
    /** @default ENABLED: Citrix flushes established connections and in-flight requests on DOWN (CTX140147). */
    downStateFlush: z.enum(['ENABLED', 'DISABLED']).default('ENABLED').describe('Service downStateFlush; Citrix default ENABLED (flush on DOWN)'),
    /** Response code that puts the service into TROFS (stop new, keep persistent). Enables soft-drain. */
    trofsCode: z.int().min(100).max(599).optional().describe('Monitor -trofsCode: HTTP code putting the service in TROFS (graceful signal)'),
    /** Response body text that puts the service into TROFS. Enables soft-drain. */
    trofsString: z.string().min(1).optional().describe('Monitor -trofsString: body text putting the service in TROFS (graceful signal)'),
    /** The gateway virtual server's persistence: a persistent client is sent back to the same service. @default NONE. */
    persistenceType: z
      .enum([
        'NONE',
        'SOURCEIP',
        'COOKIEINSERT',
        'SSLSESSION',
        'RULE',
        'URLPASSIVE',
        'CUSTOMSERVERID',
        'DESTIP',
        'SRCIPDESTIP',
        'CALLID',
        'RTSPSID',
        'DIAMETER',
        'FIXSESSION',
        'USERSESSION',
      ])
      .default('NONE')
      .describe('lb vserver -persistenceType; NetScaler default NONE'),
    /**
     * Whether a service in TROFS keeps honouring persistent sessions (the virtual server's
     * -trofsPersistence). @default ENABLED (NetScaler's default): sticky clients keep coming.
     */
    trofsPersistence: z
      .enum(['ENABLED', 'DISABLED'])
      .default('ENABLED')
      .describe('lb vserver -trofsPersistence: honour persistence in TROFS; NetScaler default ENABLED'),
    /**
     * NetScaler's request retry: an AppQoE action with `-retryOnReset YES` bound to the gateway's
     * virtual server load-balances a request whose connection the service reset (at the SYN or after
     * the request) to the next service, instead of sending the reset to the client (docs.netscaler.com,
     * "Request retry"). @default false: the client gets the reset.
     */
    retryOnReset: z
      .boolean()
      .default(false)
      .describe('AppQoE action -retryOnReset YES on the virtual server: a connection the pod resets goes to the next service; default off'),
    /** The AppQoE action's -numRetries: services tried after a reset. @default 3 (NetScaler's default; 0 to 7). */
    retryOnResetCount: z.int().min(0).max(7).default(3).describe("AppQoE action -numRetries (0-7); NetScaler's default 3"),
    /**
     * The service group's -maxReq: requests per connection to the pod. @default 0 (unlimited,
     * NetScaler's default): connection multiplexing reuses connections to the pod (CTX124713); 1 opens
     * a new one per request (CTX135155).
     */
    maxReq: z
      .int()
      .min(0)
      .max(65535)
      .default(0)
      .describe(
        'serviceGroup -maxReq: requests per connection to the pod; NetScaler default 0 (unlimited, connections reused); 1 = a new connection per request',
      ),
  })
  .superRefine((lb, ctx) => {
    if (lb.interval <= lb.resptimeout) {
      ctx.addIssue({ code: 'custom', path: ['interval'], message: `Citrix requires interval (${lb.interval}s) to exceed resptimeout (${lb.resptimeout}s)` });
    }
    if (lb.trofsCode !== undefined && lb.respCode.includes(lb.trofsCode)) {
      ctx.addIssue({ code: 'custom', path: ['trofsCode'], message: `trofsCode ${lb.trofsCode} is also in respCode; it must be a code that does not mean UP` });
    }
  });

export type CitrixLb = z.output<typeof citrixSchema>;
