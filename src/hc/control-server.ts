/**
 * The control port: the state-changing endpoints, bound to 127.0.0.1 only (the hc container's own
 * preStop and an operator's `kubectl exec` reach it; nothing outside the pod does). /metrics is on
 * the metrics port (metrics-server.ts).
 */
import type * as http from 'node:http';
import type { HcMachine } from './machine';
import { createBoundedServer, pathOf, send, sendJson } from './http-limits';
import type { ControlAnswer } from './types';
import { NO_WITNESS_QUERY, PATHS } from '../contract/hc';

/** Everything here comes from the pod itself, on loopback: one source. */
export const CONTROL_CONNECTION_LIMITS = { total: 32, perSource: 32 } as const;

type Route = { method: 'GET' | 'POST'; run(req: http.IncomingMessage): ControlAnswer | Promise<ControlAnswer> };

export function createControlServer(machine: HcMachine): http.Server {
  const routes: Record<string, Route> = {
    [PATHS.drain]: {
      method: 'POST',
      run: (req) => machine.requestDrain({ witness: new URL(req.url ?? '/', 'http://x').searchParams.get(NO_WITNESS_QUERY.name) !== NO_WITNESS_QUERY.value }),
    },
    [PATHS.closeLb]: { method: 'POST', run: () => machine.step('close-lb') },
    [PATHS.close]: { method: 'POST', run: () => machine.step('close') },
    [PATHS.reopen]: { method: 'POST', run: () => machine.step('reopen') },
    [PATHS.state]: { method: 'GET', run: () => ({ status: 200, json: machine.snapshot() }) },
  };
  return createBoundedServer(CONTROL_CONNECTION_LIMITS, (req, res) => {
    const route = routes[pathOf(req)];
    if (!route) return send(res, 404, 'not found\n');
    if (req.method !== route.method) return send(res, 405, 'method not allowed\n', { allow: route.method });
    // Through a promise, so a throw in `run` becomes a 500 like a rejection does.
    void Promise.resolve(req)
      .then((r) => route.run(r))
      .then(
        (answer) => {
          if (res.destroyed) return;
          sendJson(res, answer.status, answer.json);
        },
        (err: Error) => {
          if (!res.destroyed) sendJson(res, 500, { error: err.message });
        },
      );
  });
}
