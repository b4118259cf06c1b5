/**
 * The health port: all interfaces, GET (and HEAD) only, read-only. Reached by the LB (through the
 * health Service or a hostPort) and the kubelet's probes. Nothing here waits, and only one thing
 * changes anything: in WARMING, a readiness probe answered 200 to a kubelet source (the node's
 * addresses or the pod's default gateway, witness-sources.ts) starts the start hold. A caller from
 * anywhere else is answered the same and changes nothing. The termination witness (/wait-closed)
 * has a port of its own (witness-server.ts), which no Service exposes.
 */
import type * as http from 'node:http';
import type { HcMachine } from './machine';
import { createBoundedServer, pathOf, send } from './http-limits';
import { WARMING } from './states';
import type { HealthAnswer } from './types';
import { plainAddress, type WitnessSources } from './witness-sources';
import { PATHS } from '../contract/hc';

/**
 * LB probes and kubelet probes: far below 256 in all, and a handful per source (an LB
 * node, the kubelet). Beyond either, the oldest idle connection gives way (connection-admission.ts).
 */
export const HEALTH_CONNECTION_LIMITS = { total: 256, perSource: 32 } as const;

/** HEAD is answered like GET: Citrix's default HTTP monitor sends `HEAD /` (RFC 9110 asks for it too). */
const READ_METHODS = new Set(['GET', 'HEAD']);

export function createHealthServer(machine: HcMachine, kubeletSources: WitnessSources): http.Server {
  const answers: Record<string, () => HealthAnswer> = {
    [PATHS.lb]: () => machine.health().lb,
    [PATHS.readiness]: () => machine.health().readiness,
    [PATHS.liveness]: () => machine.health().liveness,
  };
  return createBoundedServer(HEALTH_CONNECTION_LIMITS, (req, res) => {
    const path = pathOf(req);
    const answer = answers[path];
    if (!answer) return send(res, 404, 'not found\n');
    if (!READ_METHODS.has(req.method ?? '')) return send(res, 405, 'method not allowed\n', { allow: 'GET, HEAD' });
    const { status, body } = answer();
    send(res, status, body);
    // Only WARMING listens (readinessProbed): the source is looked at then, not on every probe of the pod's life.
    if (status !== 200 || path !== PATHS.readiness || machine.state !== WARMING) return;
    const source = plainAddress(req.socket.remoteAddress ?? '');
    if (kubeletSources.allows(source)) machine.readinessProbed(source);
  });
}
