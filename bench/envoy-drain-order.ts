/**
 * Which order of drain calls resets connections at the listener stop, on each pinned real Envoy.
 * 8 keep-alive clients send 20-80 ms requests; the drain calls go out; each request ends 'ok',
 * 'refused' (its connection was never established: refused, or reset while queued before connect
 * completed; an LB re-sends it) or 'reset' (the connection was established, the request sent, and
 * the connection reset without an answer: an LB retries that only with `retry-on empty-response`,
 * and never for a POST). Repeated RUNS times per order (and the plain call alone) and version.
 *
 * Run: npm run build && node dist/bench/envoy-drain-order.js [RUNS=30] [--write]   (about 1 s per run;
 * --write records what it prints in docs/benchmarks.json)
 */
import * as http from 'node:http';
import { pinnedEnvoys, startEnvoy } from '../test/support/real-envoy';
import { writeOnExit } from '../test/support/bench-results';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Outcome = 'ok' | 'refused' | 'reset';

function one(url: string, agent: http.Agent): Promise<Outcome> {
  return new Promise((resolve) => {
    let connected = false;
    const req = http.get(url, { agent, signal: AbortSignal.timeout(3000) }, (res) => {
      res.resume();
      res.on('end', () => resolve('ok'));
      res.on('error', () => resolve(connected ? 'reset' : 'refused'));
    });
    req.on('socket', (s) => {
      if (!s.connecting) connected = true;
      else s.once('connect', () => (connected = true));
    });
    req.on('error', () => resolve(connected ? 'reset' : 'refused'));
  });
}

async function run(version: string, calls: readonly string[]): Promise<Record<Outcome, number>> {
  const envoy = await startEnvoy({ version });
  const tally: Record<Outcome, number> = { ok: 0, refused: 0, reset: 0 };
  let running = true;
  const agents = Array.from({ length: 8 }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  const loops = agents.map(async (agent) => {
    while (running) {
      const o = await one(`${envoy.trafficUrl}/slow?ms=${20 + Math.floor(Math.random() * 60)}`, agent);
      tally[o]++;
      if (o === 'refused') await sleep(10);
    }
  });
  await sleep(300);
  for (const c of calls) await envoy.admin('POST', c);
  await sleep(400);
  running = false;
  await Promise.all(loops);
  for (const a of agents) a.destroy();
  await envoy.stop();
  return tally;
}

async function main(): Promise<void> {
  const arg = process.argv.slice(2).filter((a) => a !== '--write')[0];
  writeOnExit('envoy-drain-order', `node dist/bench/envoy-drain-order.js${arg === undefined ? '' : ` ${arg}`} --write`);
  const runs = Number(arg ?? 30);
  // The plain call alone: on 1.40 it stops the listeners and tells connections to close in one call.
  const orders = [['/drain_listeners?graceful', '/drain_listeners'], ['/drain_listeners', '/drain_listeners?graceful'], ['/drain_listeners']] as const;
  console.log(`Resets at the listener stop, by drain call order (${runs} runs each, 8 keep-alive clients):\n`);
  console.log('| Envoy | calls | requests ok | refused (never connected) | reset after connect | runs with a reset |');
  console.log('|---|---|---|---|---|---|');
  for (const pinned of pinnedEnvoys()) {
    for (const calls of orders) {
      const total: Record<Outcome, number> = { ok: 0, refused: 0, reset: 0 };
      let runsWithReset = 0;
      for (let i = 0; i < runs; i++) {
        const t = await run(pinned.version, calls);
        for (const k of Object.keys(total) as Outcome[]) total[k] += t[k];
        if (t.reset > 0) runsWithReset++;
      }
      console.log(`| ${pinned.version} | ${calls.join(' then ')} | ${total.ok} | ${total.refused} | ${total.reset} | ${runsWithReset}/${runs} |`);
    }
  }
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
