/**
 * The hc sidecar's configuration: one zod schema, written by `gracegate synth` as JSON and read by
 * `gracegate hc --config FILE`. Every field is optional; the defaults below are what the sidecar
 * does when it runs on flags alone. Durations are seconds (numbers), as everywhere in gracegate.
 */
import { z } from 'zod';
import { MAX_DURATION_SECONDS } from '../core/duration';
import { CONNECTIONS_ACTIVE } from './envoy-stat-names';
import { DEFAULT_PORTS, SEQUENCES, STATE_FILE } from './hc';
import { addressOrBlockList } from './addresses';

/** Statistics the sidecar never counts, whatever `counting` says (docs/facts.md §4). */
export const ALWAYS_EXCLUDED_STATS: readonly string[] = [
  '^http\\.admin\\.', // the admin request doing the polling counts itself
  '^listener\\.admin\\.', // the admin listener's connection, same reason
  '^cluster\\.xds-grpc\\.', // Istio's permanent xDS stream: never reaches 0
  '^cluster\\.sds-grpc\\.', // Istio's permanent SDS stream: never reaches 0
  '^http\\.agent\\.', // pilot-agent's 15021 readiness listener: kubelet probes
  '^http\\.stats\\.', // Istio's 15090 Prometheus listener (HCM prefix `stats`): scrapes
  '\\.worker_\\d+\\.', // per-worker copies of listener stats double-count
  '\\.main_thread\\.', // same, for listeners owned by the main thread
];

/** Counted by default: every listener's active connections (Istio's own agent sums the same). */
export const DEFAULT_COUNTING_INCLUDE: readonly string[] = [`^listener\\..+\\.${CONNECTIONS_ACTIVE}$`];

/** Excluded by default: the 15021 readiness and 15090 Prometheus listeners (kubelet probes, scrapes). */
export const DEFAULT_COUNTING_EXCLUDE: readonly string[] = ['^listener\\..*_15021\\.', '^listener\\..*_15090\\.'];

/**
 * A duration in seconds the sidecar times with one timer: at most MAX_DURATION_SECONDS (a Node
 * timer holds 2^31-1 ms; a longer one fires after 1 ms, which would end a drain at once).
 */
const seconds = (what: string) =>
  z
    .number()
    .nonnegative({ message: `${what} must be a non-negative number of seconds` })
    .max(MAX_DURATION_SECONDS, {
      message: `${what} must be at most ${MAX_DURATION_SECONDS} seconds (about 24.8 days: the longest wait a Node.js timer holds)`,
    });

/** More failed polls than this before FAULT is not noise any more but a dead proxy left in the pool. */
export const MAX_FAULT_AFTER_FAILURES = 10;
/**
 * Longest a dead Envoy may be answered 200: faultAfterFailures x (pollIntervalSeconds +
 * envoyAdminTimeoutSeconds). A minute, ten times the default (3 x (1 s + 1 s)).
 */
export const MAX_FAULT_DETECT_SECONDS = 60;

/** The poll loop's floor: the spec's own minimum (50 ms); faster only loads Envoy's admin. */
export const MIN_POLL_INTERVAL_SECONDS = 0.05;

/**
 * A regex the sidecar compiles in JS and that Envoy's admin compiles as RE2 (the include patterns
 * are sent as the `/stats?filter=`): no lookaround or backreferences, which RE2 rejects.
 */
const statPattern = z
  .string()
  .min(1)
  .superRefine((pattern, ctx) => {
    try {
      new RegExp(pattern);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `not a valid regular expression: ${(err as Error).message}` });
      return;
    }
    if (/\(\?<?[=!]|\\[1-9]/.test(pattern)) {
      ctx.addIssue({ code: 'custom', message: 'lookaround and backreferences are not supported by Envoy (RE2)' });
    }
  });

export const hcConfigSchema = z
  .strictObject({
    /**
     * Which order the sidecar runs on /drain (docs/facts.md §2). @default 'health-first' — the order
     * Contour and Envoy Gateway use, lossless behind every LB that does not cut sessions on DOWN
     * (HAProxy and F5 defaults). The planner writes the order its LB model calls for.
     */
    sequence: z.enum(SEQUENCES).default('health-first'),
    /** Upper bound on waiting for in-flight to reach 0 after the proxy drain. @default 120 */
    drainTimeoutSeconds: seconds('drainTimeoutSeconds').default(120),
    /** Time the LB needs to act on a health change (probe interval × threshold + margin). @default 10 */
    lbBufferSeconds: seconds('lbBufferSeconds').default(10),
    /**
     * The start hold (docs/hc.md, "The start hold"): after Envoy answers and serves its configuration
     * (WARMING: readiness 200, the LB 503), the LB's first 200 waits until the kubelet's readiness
     * probe has been answered 200 (`afterReadiness`) and then `seconds` more: the time from the pod's
     * readiness to the node's traffic rules leading to it, where the LB's probe does not pass
     * through those rules (a hostPort, a health Service of its own). The planner derives both.
     * @default {afterReadiness: false, seconds: 0} - OPEN as soon as Envoy serves, as before.
     */
    startHold: z
      .strictObject({
        /** Count the hold from the first readiness probe answered 200 to a kubelet source (witness-sources.ts). @default false */
        afterReadiness: z.boolean().default(false),
        /** @default 0 */
        seconds: seconds('startHold.seconds').default(0),
      })
      .prefault({}),
    /** How often Envoy's admin is polled (in-flight while draining, /ready otherwise). @default 1 (Istio's agent polls at 1 s) */
    pollIntervalSeconds: seconds('pollIntervalSeconds')
      .min(MIN_POLL_INTERVAL_SECONDS, { message: `pollIntervalSeconds must be at least ${MIN_POLL_INTERVAL_SECONDS}` })
      .default(1),
    /** soft-drain's signal: HAProxy `disable-on-404`, Citrix `-trofsCode`/`-trofsString`, F5 `recv-disable`. */
    softSignal: z
      .strictObject({
        /** @default 404 — HAProxy `http-check disable-on-404` needs exactly 404 (Citrix: its -trofsCode, e.g. 299). */
        status: z.number().int().min(200).max(599).default(404),
        /** Body sent with the soft status. @default - the state name (like every health answer) */
        body: z.string().min(1).max(512).optional(),
      })
      .prefault({})
      .superRefine((signal, ctx) => {
        if (signal.status === 503) ctx.addIssue({ code: 'custom', path: ['status'], message: '503 is the hard failure; the soft signal must differ from it' });
        // Citrix matches its -trofsCode (e.g. 299) on the code alone; a 200 is OPEN's answer, so
        // only a body (the F5 recv-disable string) can tell the two apart.
        if (signal.status === 200 && signal.body === undefined) {
          ctx.addIssue({ code: 'custom', path: ['body'], message: 'a 200 soft signal needs a body (e.g. the F5 recv-disable string), or it reads as OPEN' });
        }
      }),
    /** Envoy's admin API. @default 'http://127.0.0.1:15000' (Istio's admin port, bound to localhost) */
    envoyAdmin: z.url({ protocol: /^http$/ }).default('http://127.0.0.1:15000'),
    /** Timeout of every call to Envoy's admin. @default 1 */
    envoyAdminTimeoutSeconds: seconds('envoyAdminTimeoutSeconds').positive().default(1),
    /**
     * Consecutive failed admin polls (unreachable, timeout, garbage, /ready not LIVE) before FAULT.
     * @default 3 — one lost poll is noise; three at the default 1 s poll is a dead proxy. At most
     * MAX_FAULT_AFTER_FAILURES, and the polls they take at most MAX_FAULT_DETECT_SECONDS: until
     * FAULT the LB hears 200 from a pod whose Envoy is gone.
     */
    faultAfterFailures: z
      .number()
      .int()
      .min(1)
      .max(MAX_FAULT_AFTER_FAILURES, { message: `faultAfterFailures must be at most ${MAX_FAULT_AFTER_FAILURES}` })
      .default(3),
    /** LB + K8s probes, all interfaces, read-only. 0 picks a free port (tests). @default 18180 */
    healthPort: z.number().int().min(0).max(65535).default(DEFAULT_PORTS.health),
    /** State-changing endpoints, bound to 127.0.0.1 only. 0 picks a free port (tests). @default 18181 */
    controlPort: z.number().int().min(0).max(65535).default(DEFAULT_PORTS.control),
    /** GET /metrics for Prometheus, all interfaces, read-only, in no Service. 0 picks a free port (tests). @default 18183 */
    metricsPort: z.number().int().min(0).max(65535).default(18183),
    /**
     * After SIGTERM, wait up to this long for Prometheus to scrape /metrics once more before
     * exiting, so the final state (CLOSED, the drain duration, a drain timeout) is recorded rather
     * than lost with the pod. @default 0 (no wait); synth writes twice the scrape interval.
     */
    finalScrapeWaitSeconds: seconds('finalScrapeWaitSeconds').default(0),
    /**
     * Prometheus' addresses or CIDR blocks (spec.observability.scrapers): only a GET /metrics from
     * them (or loopback, the pod's own) counts as a scrape, for the final-scrape wait. Empty: a
     * source that scraped before SIGTERM is the pod's Prometheus, and only such a source's scrape
     * after SIGTERM is the final one. @default [] (docs/observability.md, "The final scrape")
     */
    metricsScrapers: addressOrBlockList.default([]),
    /**
     * The termination witness: GET /wait-closed, istio-proxy's preStop, all interfaces (the kubelet
     * sends httpGet hooks to the pod IP). In no Service, unlike the health port. 0 picks a free port
     * (tests). @default 18182
     */
    witnessPort: z.number().int().min(0).max(65535).default(DEFAULT_PORTS.witness),
    /** Written atomically on every transition; mount an emptyDir so it survives a container restart. */
    stateFile: z.string().min(1).default(STATE_FILE),
    /** What "in flight" means: stats whose name matches an include and no exclude are summed. */
    counting: z
      .strictObject({
        include: z
          .array(statPattern)
          .min(1)
          .default([...DEFAULT_COUNTING_INCLUDE]),
        exclude: z.array(statPattern).default([...DEFAULT_COUNTING_EXCLUDE]),
      })
      .prefault({}),
    /**
     * Restart safety (contour#4851): start the sequence only when the pod is really terminating, i.e.
     * when istio-proxy's preStop (`GET /wait-closed`) is waiting or arrives within the window.
     */
    terminationWitness: z
      .strictObject({
        /** @default true — a sidecar restart (liveness) runs its preStop too, and must not drain. */
        required: z.boolean().default(true),
        /** How long /drain waits for the witness. @default 10 — kubelet runs all preStops at once. */
        windowSeconds: seconds('terminationWitness.windowSeconds').default(10),
        /**
         * Addresses or CIDR blocks the witness port serves besides loopback, the node's addresses
         * (GRACEGATE_HOST_IPS, from the downward API's status.hostIPs) and the pod's default gateway:
         * for a CNI whose node traffic comes from none of those. @default [] (docs/hc.md)
         */
        allowFrom: addressOrBlockList.default([]),
      })
      .prefault({}),
  })
  .superRefine((config, ctx) => {
    const detect = config.faultAfterFailures * (config.pollIntervalSeconds + config.envoyAdminTimeoutSeconds);
    if (detect > MAX_FAULT_DETECT_SECONDS) {
      ctx.addIssue({
        code: 'custom',
        path: ['faultAfterFailures'],
        message: `faultAfterFailures x (pollIntervalSeconds + envoyAdminTimeoutSeconds) = ${config.faultAfterFailures} x (${config.pollIntervalSeconds} + ${config.envoyAdminTimeoutSeconds}) = ${Math.round(detect * 1000) / 1000}s: a dead Envoy would be answered 200 that long; at most ${MAX_FAULT_DETECT_SECONDS}s`,
      });
    }
    const ports: Array<[string, number]> = [
      ['healthPort', config.healthPort],
      ['controlPort', config.controlPort],
      ['witnessPort', config.witnessPort],
      ['metricsPort', config.metricsPort],
    ];
    ports.forEach(([name, port], i) => {
      const clash = ports.slice(0, i).find(([, other]) => other === port && port !== 0);
      if (clash) ctx.addIssue({ code: 'custom', path: [name], message: `${name} ${port} is also the ${clash[0]}` });
    });
  });

/** The configuration as the sidecar uses it (defaults applied). */
export type HcConfig = z.output<typeof hcConfigSchema>;
/** The configuration as written in the JSON file (everything optional). */
export type HcConfigInput = z.input<typeof hcConfigSchema>;
