/**
 * Wires the hc runtime together: state file → machine → Envoy adapter → the two servers. The
 * machine loads the state file before either server listens, so the very first answer after a
 * restart is already the resumed state.
 */
import type * as http from 'node:http';
import { systemClock } from './clock';
import type { HcConfig } from '../contract/hc-config';
import { createControlServer } from './control-server';
import { createEnvoyAdmin } from './envoy-admin';
import { createHealthServer } from './health-server';
import { closeServer, listen } from './http-limits';
import { HcMachine } from './machine';
import { createMetricsEndpoint, finalScrapeWait, scrapersFrom } from './metrics-server';
import { checkStateFilePath, fileStateStore } from './state-file';
import { createWitnessServer } from './witness-server';
import { podWitnessSources, type WitnessSources } from './witness-sources';
import { rateLimitedLogger } from './log-limit';
import type { Clock, EnvoyPort, Logger } from './types';
import { CONTROL_HOST } from '../contract/hc';

/** gracegate's version, for the info metric (the CLI that wrote the config carries the same). */
const PACKAGE_VERSION = (require('../../../package.json') as { version: string }).version;

export interface Sidecar {
  readonly machine: HcMachine;
  readonly healthPort: number;
  readonly controlPort: number;
  readonly witnessPort: number;
  /** null when the metrics port could not be bound (logged; the sidecar runs without /metrics). */
  readonly metricsPort: number | null;
  /**
   * SIGTERM: marks the sidecar terminating and, when a sequence has started, waits (at most
   * finalScrapeWaitSeconds) for one more scrape of /metrics, then stops. Resolves with whether that
   * scrape came.
   */
  terminate(): Promise<boolean>;
  stop(): Promise<void>;
}

export interface SidecarOverrides {
  readonly clock?: Clock;
  readonly envoy?: EnvoyPort;
  readonly witnessSources?: WitnessSources;
}

export async function startSidecar(config: HcConfig, log: Logger, overrides: SidecarOverrides = {}): Promise<Sidecar> {
  checkStateFilePath(config.stateFile);
  const envoy =
    overrides.envoy ?? createEnvoyAdmin({ baseUrl: config.envoyAdmin, timeoutMs: config.envoyAdminTimeoutSeconds * 1000, counting: config.counting, log });
  const clock = overrides.clock ?? systemClock;
  const machine = new HcMachine({ config, clock, envoy, store: fileStateStore(config.stateFile, log, clock.now), log });
  machine.start();
  let terminatingSince: number | null = null;
  const metrics = createMetricsEndpoint(
    machine,
    {
      version: PACKAGE_VERSION,
      envoyVersion: () => envoy.profile().version,
      lastCount: () => envoy.profile().lastCount,
      terminatingSince: () => terminatingSince,
    },
    clock,
    scrapersFrom(config.metricsScrapers),
  );
  const sources = overrides.witnessSources ?? podWitnessSources(config.terminationWitness.allowFrom);
  // The kubelet's readiness probes come from where its hooks come from (witness-sources.ts).
  const health = createHealthServer(machine, sources);
  const control = createControlServer(machine);
  const witness = createWitnessServer(machine, sources, rateLimitedLogger(log, clock));
  const servers: http.Server[] = [];
  try {
    const healthPort = await listen(health, config.healthPort);
    servers.push(health);
    const controlPort = await listen(control, config.controlPort, CONTROL_HOST);
    servers.push(control);
    // Metrics are for people: a metrics port that cannot be bound is logged, and the health and
    // drain work goes on without it rather than crash-looping the gateway's health answers.
    const metricsPort = await listen(metrics.server, config.metricsPort).then(
      (port) => {
        servers.push(metrics.server);
        return port;
      },
      (err: NodeJS.ErrnoException) => {
        log('error', 'cannot listen on the metrics port: running without /metrics', { metricsPort: config.metricsPort, error: err.message });
        return null;
      },
    );
    const witnessPort = await listen(witness, config.witnessPort);
    servers.push(witness);
    log('info', 'listening', {
      healthPort,
      controlPort,
      controlHost: CONTROL_HOST,
      witnessPort,
      witnessSources: sources.described,
      metricsPort,
      sequence: config.sequence,
      envoyAdmin: config.envoyAdmin,
      state: machine.state,
    });
    const sidecar: Sidecar = {
      machine,
      healthPort,
      controlPort,
      witnessPort,
      metricsPort,
      async terminate() {
        terminatingSince ??= clock.now();
        const now = clock.now();
        const { waitMs, reason } = finalScrapeWait({
          boundMs: config.finalScrapeWaitSeconds * 1000,
          metricsPort: metricsPort !== null,
          sequenceRan: machine.context.sequenceStartedAt !== null,
          lastScrapeAt: metrics.lastScrapeAt(),
          scrapeIntervalMs: metrics.scrapeIntervalMs(),
          now,
        });
        const waits = waitMs > 0;
        const decision = machine.noteFinalScrape({ waits, reason, until: waits ? new Date(now + waitMs).toISOString() : null, scraped: null });
        if (!waits && machine.context.sequenceStartedAt !== null) log('info', 'no final-scrape wait', { reason });
        const scraped = waits ? await metrics.nextScrape(waitMs) : false;
        if (waits) {
          decision.scraped = scraped;
          log(scraped ? 'info' : 'warn', scraped ? 'final scrape served' : 'no scrape before the final-scrape bound', {
            finalScrapeWaitSeconds: config.finalScrapeWaitSeconds,
            waitedUpToMs: waitMs,
            reason,
            state: machine.state,
          });
        }
        await sidecar.stop();
        return scraped;
      },
      async stop() {
        machine.stop();
        await Promise.all(servers.map(closeServer));
      },
    };
    return sidecar;
  } catch (err) {
    machine.stop();
    await Promise.all(servers.map(closeServer));
    throw err;
  }
}
