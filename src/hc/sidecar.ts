/**
 * Wires the hc runtime together: state file → machine → Envoy adapter → the two servers. The
 * machine loads the state file before either server listens, so the very first answer after a
 * restart is already the resumed state.
 */
import type * as http from 'node:http';
import { systemClock } from './clock';
import type { HcConfig } from './config';
import { createControlServer } from './control-server';
import { createEnvoyAdmin } from './envoy-admin';
import { createHealthServer } from './health-server';
import { closeServer, listen } from './http-limits';
import { HcMachine } from './machine';
import { checkStateFilePath, fileStateStore } from './state-file';
import { createWitnessServer } from './witness-server';
import type { Clock, EnvoyPort, Logger } from './types';
import { CONTROL_HOST } from '../hc-contract';

export interface Sidecar {
  readonly machine: HcMachine;
  readonly healthPort: number;
  readonly controlPort: number;
  readonly witnessPort: number;
  stop(): Promise<void>;
}

export interface SidecarOverrides {
  readonly clock?: Clock;
  readonly envoy?: EnvoyPort;
}

export async function startSidecar(config: HcConfig, log: Logger, overrides: SidecarOverrides = {}): Promise<Sidecar> {
  checkStateFilePath(config.stateFile);
  const envoy =
    overrides.envoy ??
    createEnvoyAdmin({ baseUrl: config.envoyAdmin, timeoutMs: config.envoyAdminTimeoutSeconds * 1000, counting: config.counting, log });
  const clock = overrides.clock ?? systemClock;
  const machine = new HcMachine({ config, clock, envoy, store: fileStateStore(config.stateFile, log, clock.now), log });
  machine.start();
  const health = createHealthServer(machine);
  const control = createControlServer(machine);
  const witness = createWitnessServer(machine);
  const servers: http.Server[] = [];
  try {
    const healthPort = await listen(health, config.healthPort);
    servers.push(health);
    const controlPort = await listen(control, config.controlPort, CONTROL_HOST);
    servers.push(control);
    const witnessPort = await listen(witness, config.witnessPort);
    servers.push(witness);
    log('info', 'listening', { healthPort, controlPort, controlHost: CONTROL_HOST, witnessPort, sequence: config.sequence, envoyAdmin: config.envoyAdmin, state: machine.state });
    return {
      machine,
      healthPort,
      controlPort,
      witnessPort,
      async stop() {
        machine.stop();
        await Promise.all(servers.map(closeServer));
      },
    };
  } catch (err) {
    machine.stop();
    await Promise.all(servers.map(closeServer));
    throw err;
  }
}
