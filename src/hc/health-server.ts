/**
 * The health port: all interfaces, GET (and HEAD) only, read-only. Reached by the LB, the kubelet's
 * probes and istio-proxy's preStop. Nothing here changes the state: /wait-closed only waits, and
 * counts as the witness a pending /drain (from the control port, localhost only) needs — so a
 * caller out there can make nothing drain on its own.
 */
import type * as http from 'node:http';
import type { HcMachine } from './machine';
import { createBoundedServer, pathOf, send } from './http-limits';
import type { HealthAnswer } from './types';

/**
 * LB probes, kubelet probes and a few waiters: far below 256 in all, and a handful per source (an LB
 * node, the kubelet). Beyond either, the oldest idle connection gives way (connection-admission.ts).
 */
export const HEALTH_CONNECTION_LIMITS = { total: 256, perSource: 32 } as const;

/** HEAD is answered like GET: Citrix's default HTTP monitor sends `HEAD /` (RFC 9110 asks for it too). */
const READ_METHODS = new Set(['GET', 'HEAD']);

export function createHealthServer(machine: HcMachine): http.Server {
  const answers: Record<string, () => HealthAnswer> = {
    '/health_check.html': () => machine.lbHealth(),
    '/health': () => machine.readiness(),
    '/live': () => machine.liveness(),
  };
  return createBoundedServer(HEALTH_CONNECTION_LIMITS, (req, res) => {
    const path = pathOf(req);
    const known = path === '/wait-closed' || answers[path] !== undefined;
    if (!known) return send(res, 404, 'not found\n');
    if (!READ_METHODS.has(req.method ?? '')) return send(res, 405, 'method not allowed\n', { allow: 'GET, HEAD' });
    const answer = answers[path];
    if (answer) {
      const { status, body } = answer();
      return send(res, status, body);
    }
    const wait = machine.waitClosed();
    if (!wait) return send(res, 429, machine.state, { 'retry-after': '1' });
    res.on('close', () => {
      if (!res.writableEnded) wait.cancel();
    });
    void wait.answer.then(({ status, body }) => {
      if (!res.destroyed) send(res, status, body);
    });
  });
}
