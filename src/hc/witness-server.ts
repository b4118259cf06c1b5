/**
 * The witness port: the two preStop hooks, GET /wait-closed (istio-proxy's, the termination witness)
 * and GET /hc-stopping (the hc container's own). The kubelet sends httpGet hooks
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
    const path = pathOf(req);
    if (path !== PATHS.waitClosed && path !== PATHS.hcStopping) return send(res, 404, 'not found\n');
    if (req.method !== 'GET') return send(res, 405, 'method not allowed\n', { allow: 'GET' });
    const source = req.socket.remoteAddress ?? '';
    const wait = path === PATHS.waitClosed ? machine.waitClosed(source) : machine.hcStopping(source);
    res.on('close', () => {
      if (!res.writableEnded) wait.cancel();
    });
    void wait.answer.then(({ status, body }) => {
      if (!res.destroyed) send(res, status, body);
    });
  });
}
