/**
 * Issue 48's real runs: every order behind each LB family (harness/scenarios.ts ORDER_FAMILIES), on
 * real HAProxy and real Envoy pods (Istio's Envoy), repeated; writes docs/e2e/orders-results.json and
 * the block of docs/simulate.md that sets the model's prediction beside each.
 *   npm run build && node dist/test/proof/e2e/orders-main.js [REPEATS]     (default 3)
 *   node dist/test/proof/e2e/orders-main.js --render      re-renders docs/simulate.md from the file
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/run-cli';
import { classifyFailures, describeRun, runSequenceProblems } from '../harness/expect';
import { haproxyVersion } from '../harness/haproxy';
import { ORDERS_MARKERS, readOrdersResults, renderOrders, type OrdersResults, type OrdersRun } from '../harness/orders-results';
import { istioProxy, proxyLabel } from '../harness/proxies';
import { spliceBetween } from '../harness/render';
import { runScenario } from '../harness/scenario';
import { ORDER_RUNS } from '../harness/scenarios';

const RESULTS = join(REPO_ROOT, 'docs', 'e2e', 'orders-results.json');

function render(results: OrdersResults): void {
  const doc = join(REPO_ROOT, 'docs', 'simulate.md');
  writeFileSync(doc, spliceBetween(readFileSync(doc, 'utf8'), ORDERS_MARKERS, renderOrders(results)));
}

async function main(): Promise<void> {
  if (process.argv[2] === '--render') {
    render(readOrdersResults(RESULTS));
    return;
  }
  const repeats = Number(process.argv[2] ?? 3);
  if (!Number.isInteger(repeats) || repeats < 1) throw new Error(`REPEATS: '${process.argv[2]}' is not a positive integer`);
  const started = Date.now();
  const proxy = istioProxy();
  const runs: OrdersRun[] = [];
  for (const { family, order, cfg } of ORDER_RUNS) {
    const run: OrdersRun = { family: family.family, order, proxy: proxyLabel(proxy), lost: [], requests: [], classes: [] };
    for (let i = 0; i < repeats; i++) {
      process.stderr.write(`orders: ${order} behind ${family.family}, run ${i + 1}/${repeats} ... `);
      const r = await runScenario(cfg, proxy);
      const c = classifyFailures(r);
      const problems = runSequenceProblems(r);
      run.lost.push(r.result.failureTotal);
      run.requests.push(r.result.requests);
      run.classes.push({ cutAtDown: c.cutAtDown.length, keepAliveRace: c.keepAliveRace.length, other: c.other.length });
      process.stderr.write(`${r.result.requests} requests, ${r.result.failureTotal} failed${problems.length > 0 ? ', SEQUENCE PROOF FAILED' : ''}\n`);
      if (problems.length > 0) process.stderr.write(`${describeRun(r)}\n`);
    }
    runs.push(run);
  }
  const results: OrdersResults = {
    generated: {
      date: new Date().toISOString().slice(0, 10),
      command: `node dist/test/proof/e2e/orders-main.js ${repeats}`,
      node: process.version,
      cpus: cpus().length,
      seconds: Math.round((Date.now() - started) / 1000),
      haproxy: haproxyVersion(),
    },
    repeats,
    runs,
  };
  writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
  render(results);
  process.stderr.write(`wrote docs/e2e/orders-results.json and docs/simulate.md's orders block in ${results.generated.seconds} s\n`);
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
