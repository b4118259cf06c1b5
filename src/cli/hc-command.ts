/**
 * `gracegate hc`: runs the sidecar until SIGTERM/SIGINT. Loads only src/hc (never cdk8s).
 */
import { durationFlag, integerFlag, runParsedCommand } from './args';
import type { HcConfigOverrides } from '../hc/config-file';
import { loadHcConfig } from './load-hc-config';
import { jsonLogger } from '../hc/log';
import { startSidecar } from '../hc/sidecar';
import { DEFAULT_PORTS, STATE_FILE } from '../contract/hc';

const USAGE = `usage: gracegate hc [--config FILE] [options]

Runs the hc sidecar: the health port (LB, readiness, liveness), the witness port (/wait-closed,
istio-proxy's preStop), the control port (127.0.0.1 only: /drain, /close-lb, /close, /reopen,
/state) and the metrics port (GET /metrics, read-only). Flags override the file.

options:
  --config FILE         JSON written by 'gracegate synth' (optional: defaults otherwise)
  --envoy-admin URL     Envoy admin API (default http://127.0.0.1:15000)
  --health-port N       health port, all interfaces (default ${DEFAULT_PORTS.health}; 0 = any free port)
  --control-port N      control port, 127.0.0.1 only (default ${DEFAULT_PORTS.control}; 0 = any free port)
  --witness-port N      witness port, all interfaces, in no Service (default ${DEFAULT_PORTS.witness}; 0 = any free port)
  --metrics-port N      GET /metrics, all interfaces, read-only (default 18183; 0 = any free port)
  --final-scrape-wait DUR  after SIGTERM, wait at most this long for one more scrape (default 0)
  --sequence S          soft-drain | health-first | drain-first (default health-first)
  --drain-timeout DUR   bound on waiting for in-flight 0 (default 120s)
  --lb-buffer DUR       time the LB needs to act on a health change (default 10s)
  --soft-status CODE    soft-drain's status (default 404)
  --poll-interval DUR   Envoy admin poll interval (default 1s)
  --state-file PATH     state file (default ${STATE_FILE})
  -h, --help            this text
`;

const OPTIONS = {
  config: { type: 'string' },
  'envoy-admin': { type: 'string' },
  'health-port': { type: 'string' },
  'control-port': { type: 'string' },
  'witness-port': { type: 'string' },
  'metrics-port': { type: 'string' },
  'final-scrape-wait': { type: 'string' },
  sequence: { type: 'string' },
  'drain-timeout': { type: 'string' },
  'lb-buffer': { type: 'string' },
  'soft-status': { type: 'string' },
  'poll-interval': { type: 'string' },
  'state-file': { type: 'string' },
} as const;

export function overridesFromFlags(values: Partial<Record<keyof typeof OPTIONS, string | boolean>>): HcConfigOverrides {
  const o: Record<string, unknown> = {};
  const str = (k: keyof typeof OPTIONS) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  const set = <T>(key: string, flag: keyof typeof OPTIONS, convert: (name: string, v: string) => T) => {
    const v = str(flag);
    if (v !== undefined) o[key] = convert(flag, v);
  };
  set('envoyAdmin', 'envoy-admin', (_, v) => v);
  set('healthPort', 'health-port', integerFlag);
  set('controlPort', 'control-port', integerFlag);
  set('witnessPort', 'witness-port', integerFlag);
  set('metricsPort', 'metrics-port', integerFlag);
  set('finalScrapeWaitSeconds', 'final-scrape-wait', durationFlag);
  set('sequence', 'sequence', (_, v) => v);
  set('drainTimeoutSeconds', 'drain-timeout', durationFlag);
  set('lbBufferSeconds', 'lb-buffer', durationFlag);
  set('pollIntervalSeconds', 'poll-interval', durationFlag);
  set('stateFile', 'state-file', (_, v) => v);
  const soft = str('soft-status');
  if (soft !== undefined) o['softSignal'] = { status: integerFlag('soft-status', soft) };
  return o;
}

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', on);
      process.off('SIGINT', on);
      resolve(signal);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  });
}

export async function run(args: string[]): Promise<number> {
  return runParsedCommand(USAGE, args, OPTIONS, false, async ({ values }) => {
    const config = loadHcConfig(values.config, overridesFromFlags(values));
    // A log reader that went away (EPIPE) must not take the health endpoints down with it.
    process.stdout.on('error', () => {});
    const log = jsonLogger();
    const signalled = untilSignal();
    let sidecar;
    try {
      sidecar = await startSidecar(config, log);
    } catch (err) {
      // A StateFileError is a GracegateError: main.ts prints it, exit 2.
      const e = err as NodeJS.ErrnoException;
      if (e.code !== 'EADDRINUSE' && e.code !== 'EACCES') throw err;
      log('error', 'cannot listen', { error: e.message });
      process.stderr.write(`gracegate hc: cannot listen: ${e.message}\n`);
      return 1;
    }
    const signal = await signalled;
    log('info', 'stopping', { signal, state: sidecar.machine.state });
    await sidecar.terminate();
    return 0;
  });
}
