/**
 * The witness port: the two preStop hooks, GET /wait-closed (istio-proxy's, the termination witness)
 * and GET /hc-stopping (the hc container's own). The kubelet sends httpGet hooks to the pod IP, so
 * this listens on all interfaces; unlike the health port it is in no Service (no NodePort, no
 * hostPort). Only the addresses a kubelet's hook can come from are served (witness-sources.ts):
 * anyone else is answered 403 and is never counted as a witness, so a pod that reaches the pod IP
 * can neither hold nor fake one. A held request lives exactly as long as its connection: one
 * request per connection (a pipelined one closes it, http-limits.ts), and the connection's close
 * ends its wait at once.
 */
import type * as http from 'node:http';
import type { HcMachine } from './machine';
import { createBoundedServer, pathOf, send } from './http-limits';
import type { Logger } from './types';
import type { WitnessSources } from './witness-sources';
import { PATHS } from '../contract/hc';

/** The kubelet's hook and a few retries; a few connections per source. */
export const WITNESS_CONNECTION_LIMITS = { total: 64, perSource: 8 } as const;

export const NOT_A_KUBELET = 'forbidden: the witness port serves the kubelet (the node) only\n';

/** `log` should be rate-limited (log-limit.ts): a refused caller chooses how often it calls. */
export function createWitnessServer(machine: HcMachine, sources: WitnessSources, log: Logger): http.Server {
  return createBoundedServer(WITNESS_CONNECTION_LIMITS, (req, res) => {
    const path = pathOf(req);
    if (path !== PATHS.waitClosed && path !== PATHS.hcStopping) return send(res, 404, 'not found\n');
    if (req.method !== 'GET') return send(res, 405, 'method not allowed\n', { allow: 'GET' });
    const source = req.socket.remoteAddress ?? '';
    if (!sources.allows(source)) {
      machine.counters.refusedWitnessCallers++;
      log('warn', 'witness port: caller is not a kubelet source; refused (403)', {
        source,
        path,
        allowed: sources.described,
        hint: "if this was the kubelet's hook, add its address to terminationWitness.allowFrom (docs/hc.md)",
      });
      return send(res, 403, NOT_A_KUBELET, { connection: 'close' });
    }
    log('info', `witness port: ${path} from a kubelet source`, { source });
    const wait = path === PATHS.waitClosed ? machine.waitClosed(source) : machine.hcStopping(source);
    const gone = () => {
      if (!res.writableEnded) wait.cancel();
    };
    res.once('close', gone);
    req.socket.once('close', gone);
    void wait.answer.then(({ status, body }) => {
      if (!res.destroyed) send(res, status, body);
    });
  });
}
