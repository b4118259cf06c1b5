/**
 * Runs the Envoy stand-in as its own process, for harnesses that need a separate proxy process:
 *   node dist/test/support/envoy-standin-main.js --listen-port N --admin-port M [--tcp-port T]
 *     [--host H] [--drain-time-s S] [--hcm-drain-timeout-ms MS] [--inbound] [--version 1.36.4|1.40.0]
 * Prints one JSON line `{"event":"ready","listenPort":…,"adminPort":…,"tcpPort":…}` on stdout once
 * listening (ports may be 0), and stops on SIGTERM/SIGINT. Faults: POST /standin/fault on the admin.
 */
import { parseArgs } from 'node:util';
import { startEnvoyStandin, type StandinVersion } from './envoy-standin';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'listen-port': { type: 'string', default: '0' },
      'admin-port': { type: 'string', default: '0' },
      'tcp-port': { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      'drain-time-s': { type: 'string', default: '600' },
      'hcm-drain-timeout-ms': { type: 'string', default: '5000' },
      inbound: { type: 'boolean', default: false },
      version: { type: 'string', default: '1.36.4' },
    },
    strict: true,
  });
  const standin = await startEnvoyStandin({
    host: values.host,
    listenPort: Number(values['listen-port']),
    adminPort: Number(values['admin-port']),
    ...(values['tcp-port'] !== undefined ? { tcpPort: Number(values['tcp-port']) } : {}),
    drainTimeS: Number(values['drain-time-s']),
    hcmDrainTimeoutMs: Number(values['hcm-drain-timeout-ms']),
    trafficDirection: values.inbound ? 'inbound' : 'outbound',
    version: values.version as StandinVersion,
  });
  process.stdout.write(
    `${JSON.stringify({ event: 'ready', listenPort: standin.listenPort, adminPort: standin.adminPort, tcpPort: standin.tcpPort ?? null })}\n`,
  );
  const stop = () => {
    void standin.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: Error) => {
  process.stderr.write(`envoy-standin: ${err.stack ?? err.message}\n`);
  process.exit(1);
});
