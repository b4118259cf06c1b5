/**
 * The contrast on the real cluster: the source article's order, as a user of that design runs it
 * on real pods. The hc container's preStop drains Envoy while it keeps accepting
 * (`drain_listeners?graceful&skip_exit`), polls in-flight up to the drain timeout, then fails the
 * LB's health (the sidecar's manual /close-lb) and waits the LB buffer; istio-proxy's preStop is a
 * fixed sleep covering all of it (its only choice without the sidecar's hold). The script runs with
 * the image's own node, inside the pod (Envoy's admin and the control port are loopback only).
 */
import type { Plan } from '../../../src/plan/plan-gateway';
import type { Installed } from './gateway';
import { kubectl } from './kubectl';

function script(drainMs: number, pollMs: number, bufferMs: number, adminPort: number, controlPort: number): string {
  return [
    "const http = require('node:http');",
    'const call = (method, port, path) => new Promise((resolve) => {',
    "  const r = http.request({ host: '127.0.0.1', port, path, method, timeout: 2000 }, (res) => { let b = ''; res.on('data', (d) => { b += d; }); res.on('end', () => resolve(b)); });",
    "  r.on('error', () => resolve('')); r.on('timeout', () => r.destroy()); r.end();",
    '});',
    'const sleep = (ms) => new Promise((r) => setTimeout(r, ms));',
    '(async () => {',
    `  await call('POST', ${adminPort}, '/drain_listeners?graceful&skip_exit');`,
    `  const end = Date.now() + ${drainMs};`,
    '  while (Date.now() < end) {',
    `    const stats = await call('GET', ${adminPort}, '/stats?filter=downstream_rq_active');`,
    "    const n = stats.split('\\n').filter((l) => /^http\\.outbound_/.test(l)).reduce((a, l) => a + Number(l.split(': ')[1] || 0), 0);",
    '    if (n === 0) break;',
    `    await sleep(${pollMs});`,
    '  }',
    `  await call('POST', ${controlPort}, '/close-lb');`,
    `  await sleep(${bufferMs});`,
    '})();',
  ].join('\n');
}

/** Replaces gracegate's hooks on the gateway's pods with the article's order; resolves when the pods rolled. */
export function applyArticleOrder(g: Installed, plan: Plan): void {
  const t = plan.timings;
  const drainMs = t.drainTimeoutSeconds * 1000;
  const bufferMs = t.lbBufferSeconds * 1000;
  const sleepSeconds = Math.ceil((drainMs + bufferMs) / 1000) + 1;
  const patch = {
    spec: {
      template: {
        spec: {
          containers: [
            {
              name: 'gracegate-hc',
              lifecycle: {
                preStop: { httpGet: null, exec: { command: ['node', '-e', script(drainMs, t.pollIntervalSeconds * 1000, bufferMs, 15000, 18181)] } },
              },
            },
            // null removes gracegate's httpGet hooks: a hook has one handler.
            { name: 'istio-proxy', lifecycle: { preStop: { httpGet: null, sleep: { seconds: sleepSeconds } } } },
          ],
        },
      },
    },
  };
  kubectl(['-n', g.options.namespace, 'patch', 'deployment', g.options.name, '--type', 'strategic', '-p', JSON.stringify(patch)]);
  kubectl(['-n', g.options.namespace, 'rollout', 'status', `deployment/${g.options.name}`, '--timeout=120s'], { timeoutMs: 130_000 });
}
