/**
 * The witness port: GET /wait-closed only, istio-proxy's preStop. The kubelet sends httpGet hooks
 * to the pod IP, so this listens on all interfaces; unlike the health port it is in no Service (no
 * NodePort, no hostPort), so the LB and whoever reaches the nodes cannot hold or fake the witness.
 * Pods that reach the pod IP still can, unless the NetworkPolicy synth writes is applied (traffic
 * from the pod's own node, the kubelet's, is always allowed by NetworkPolicy).
 */
import type * as http from 'node:http';
import type { HcMachine } from './machine';
import { createBoundedServer, pathOf, send } from './http-limits';
import { PATHS } from '../contract/hc';

/** The kubelet's hook and a few retries; a few connections per source. */
export const WITNESS_CONNECTION_LIMITS = { total: 64, perSource: 8 } as const;

export function createWitnessServer(machine: HcMachine): http.Server {
  return createBoundedServer(WITNESS_CONNECTION_LIMITS, (req, res) => {
    if (pathOf(req) !== PATHS.waitClosed) return send(res, 404, 'not found\n');
    if (req.method !== 'GET') return send(res, 405, 'method not allowed\n', { allow: 'GET' });
    const wait = machine.waitClosed(req.socket.remoteAddress ?? '');
    res.on('close', () => {
      if (!res.writableEnded) wait.cancel();
    });
    void wait.answer.then(({ status, body }) => {
      if (!res.destroyed) send(res, status, body);
    });
  });
}
