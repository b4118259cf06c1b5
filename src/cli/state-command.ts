/**
 * `gracegate state`: prints the local sidecar's `GET /state` (127.0.0.1, read-only). The sidecar
 * image has no shell and no curl: this is what `kubectl exec POD -c gracegate-hc -- gracegate state
 * --config /etc/gracegate/hc.json` runs, and what `gracegate verify --pod-state` reads.
 */
import { GracegateError } from '../core/errors';
import { CONTROL_HOST, DEFAULT_PORTS, PATHS, type StateBody } from '../contract/hc';
import { controlCall } from './control-client';
import { integerFlag, runParsedCommand } from './args';
import { loadHcConfig } from './load-hc-config';

const USAGE = `usage: gracegate state [--config FILE] [--control-port N]

Prints the local hc sidecar's state (GET ${PATHS.state} on ${CONTROL_HOST}) as JSON: the state, the six
termination events with their times, in-flight, the sequence. Read-only.

options:
  --config FILE       the sidecar's JSON config (for the control port)
  --control-port N    the sidecar's control port (default: from --config, else ${DEFAULT_PORTS.control})
  -h, --help          this text
Exit 2: the sidecar did not answer (or answered something that is not its state).
`;

const OPTIONS = {
  config: { type: 'string' },
  'control-port': { type: 'string' },
} as const;

/** The whole exchange's bound: the sidecar answers /state from memory, in milliseconds. */
export const STATE_TIMEOUT_MS = 5_000;

export async function run(args: string[]): Promise<number> {
  return runParsedCommand(USAGE, args, OPTIONS, false, async ({ values }) => {
    const portFlag = values['control-port'];
    const port = typeof portFlag === 'string' ? integerFlag('control-port', portFlag) : loadHcConfig(values.config).controlPort;
    let body: unknown;
    try {
      const reply = await controlCall<StateBody>(port, 'GET', PATHS.state, STATE_TIMEOUT_MS);
      if (reply.status !== 200) throw new Error(`HTTP ${reply.status}`);
      body = reply.json;
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const why = e.name === 'TimeoutError' ? `no answer within ${STATE_TIMEOUT_MS / 1000} s` : e.message;
      throw new GracegateError(
        `the sidecar at ${CONTROL_HOST}:${port} did not answer GET ${PATHS.state}: ${why} (is the hc sidecar running, on that --control-port?)`,
      );
    }
    if (typeof body !== 'object' || body === null || typeof (body as { state?: unknown }).state !== 'string') {
      throw new GracegateError(`${CONTROL_HOST}:${port} answered GET ${PATHS.state} with JSON that is not the sidecar's state (wrong --control-port?)`);
    }
    process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    return 0;
  });
}
