/**
 * `gracegate drain`: the hc container's preStop. Asks the local sidecar to start its sequence and
 * blocks until the sequence has finished or its bound is reached. Exits as every command does
 * (src/cli/args.ts EXIT): 0 finished, or nothing to do (no pod termination witnessed: a container
 * restart must not drain the pod); 1 refused, or the bound was reached first; 2 the sidecar cannot
 * be reached.
 */
import { durationFlag, EXIT, integerFlag, runParsedCommand } from './args';
import { controlCall, type ControlReply } from './control-client';
import { loadHcConfig } from './load-hc-config';
import { BOUND_MARGIN_MS, sequenceBoundMs } from '../hc/sequence-context';
import { MAX_TIMER_MS } from '../core/duration';
import { DEFAULT_PORTS, NO_WITNESS_QUERY, PATHS, type DrainBody, type ErrorBody, type RefusedBody, type StateBody } from '../contract/hc';

const USAGE = `usage: gracegate drain [--config FILE] [--control-port N] [--no-witness] [--timeout DUR]

Starts the drain sequence on the local hc sidecar (127.0.0.1) and waits until it has finished.

options:
  --config FILE       the sidecar's JSON config (for the control port and the bounds)
  --control-port N    the sidecar's control port (default: from --config, else ${DEFAULT_PORTS.control})
  --no-witness        drain even if no pod termination is witnessed (manual use)
  --timeout DUR       give up after DUR (default: the bound the sidecar reports)
  -h, --help          this text
Exit 0 also when there is nothing to do (no pod termination witnessed); exit 1 when the sidecar
refused or the bound was reached before the sequence finished.
`;

const OPTIONS = {
  config: { type: 'string' },
  'control-port': { type: 'string' },
  'no-witness': { type: 'boolean' },
  timeout: { type: 'string' },
} as const;

const POLL_MS = 500;
const CONNECT_RETRY_MS = 5_000;

/** The fields of any /drain answer: DrainBody (started or not), RefusedBody (409), ErrorBody (500). */
type DrainReply = Omit<Extract<DrainBody, { draining: true }>, 'draining'> & Omit<RefusedBody, 'draining'> & ErrorBody & { draining: boolean };

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (line: string) => process.stderr.write(`gracegate drain: ${line}\n`);

export async function run(args: string[]): Promise<number> {
  return runParsedCommand(USAGE, args, OPTIONS, false, async ({ values }) => {
    const config = loadHcConfig(values.config);
    const portFlag = values['control-port'];
    const port = typeof portFlag === 'string' ? integerFlag('control-port', portFlag) : config.controlPort;
    const timeoutMs = typeof values.timeout === 'string' ? durationFlag('timeout', values.timeout) * 1000 : undefined;
    const started = Date.now();
    const path = values['no-witness'] ? `${PATHS.drain}?${NO_WITNESS_QUERY.name}=${NO_WITNESS_QUERY.value}` : PATHS.drain;
    // The sidecar holds /drain for up to its witness window (bounded on its side); wait generously.
    // (AbortSignal.timeout is a Node timer: a longer delay would abort after 1 ms.)
    const drainCallMs = Math.min((config.terminationWitness.windowSeconds + 30) * 1000, MAX_TIMER_MS);

    let reply: ControlReply<DrainReply> | undefined;
    for (;;) {
      try {
        reply = await controlCall(port, 'POST', path, drainCallMs);
        break;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        const retryable = code === 'ECONNREFUSED' || code === 'ECONNRESET';
        if (!retryable || Date.now() - started >= CONNECT_RETRY_MS) {
          say(`the sidecar at 127.0.0.1:${port} cannot be reached: ${(err as Error).message} (is the hc sidecar running, on that --control-port?)`);
          return EXIT.badInput;
        }
        await delay(250);
      }
    }
    const body = reply.json;
    if (reply.status === 409 || reply.status >= 500) {
      say(`refused (HTTP ${reply.status}): ${String(body.reason ?? body.error ?? 'no reason given')}`);
      return EXIT.refused;
    }
    if (body.draining !== true) {
      say(String(body.reason ?? 'not draining'));
      return EXIT.done;
    }
    const finishBy = typeof body.finishBy === 'string' ? Date.parse(body.finishBy) : NaN;
    const fallbackMs = sequenceBoundMs(config) + 2 * BOUND_MARGIN_MS;
    const deadline = timeoutMs !== undefined ? started + timeoutMs : Number.isFinite(finishBy) ? finishBy + BOUND_MARGIN_MS : started + fallbackMs;
    say(
      `${String(body.reason)}; state ${String(body.state)}, waiting until the sequence has finished (at most ${Math.round((deadline - Date.now()) / 1000)}s)`,
    );

    let lastError = '';
    while (Date.now() < deadline) {
      try {
        const state = await controlCall<StateBody>(port, 'GET', PATHS.state, 2_000);
        lastError = '';
        if (state.json.finished === true) {
          say(`finished in ${((Date.now() - started) / 1000).toFixed(1)}s (${String(state.json.state)})`);
          return EXIT.done;
        }
      } catch (err) {
        lastError = (err as Error).message;
      }
      await delay(POLL_MS);
    }
    say(`bound reached before the sequence finished${lastError ? ` (last error: ${lastError})` : ''}`);
    return EXIT.refused;
  });
}
