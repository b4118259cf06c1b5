import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/repo';
import { ORDERS_MARKERS, ordersRows, planOrderOf, readOrdersResults, renderOrders } from '../proof/harness/orders-results';
import { ORDER_FAMILIES } from '../proof/harness/scenarios';

// docs/simulate.md's orders block is docs/e2e/orders-results.json rendered, and what it claims holds:
// behind each LB family the plan's order lost the least in the real runs, and the model's prediction
// agrees with every measured configuration within the agreement table's tolerance.
const results = readOrdersResults(join(REPO_ROOT, 'docs', 'e2e', 'orders-results.json'));
const rows = ordersRows(results);

test("docs/simulate.md's orders block is docs/e2e/orders-results.json rendered", () => {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'simulate.md'), 'utf8');
  const [begin, end] = ORDERS_MARKERS;
  assert.equal(doc.slice(doc.indexOf(begin) + begin.length + 1, doc.indexOf(end) - 1), renderOrders(results), 'node dist/test/proof/e2e/orders-main.js');
});

test('every family ran every order it allows', () => {
  for (const f of ORDER_FAMILIES)
    assert.deepEqual(
      rows.filter((r) => r.family === f).map((r) => r.order),
      f.orders,
      f.family,
    );
});

test("behind each family, the plan's order lost the least in the real runs", () => {
  for (const f of ORDER_FAMILIES) {
    const mine = rows.filter((r) => r.family === f);
    const planOrder = planOrderOf(f);
    const chosen = mine.find((r) => r.order === planOrder)!;
    for (const other of mine)
      assert.ok(chosen.measuredMean <= other.measuredMean, `${f.family}: ${planOrder} ${chosen.measuredMean}, ${other.order} ${other.measuredMean}`);
  }
});

test("the model's prediction agrees with every measured configuration", () => {
  assert.deepEqual(
    rows
      .filter((r) => !r.agrees)
      .map(
        (r) => `${r.order} behind ${r.family.family}: simulated ${r.simulatedMean.toFixed(2)}, measured ${r.measuredMean.toFixed(2)} (${r.lost.join(', ')})`,
      ),
    [],
  );
});
