/**
 * A rollout's time term by term (test/proof/cluster/start-half.ts rolloutChain): the chain its pods
 * ran in, with numbers written out here.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rolloutChain } from '../cluster/start-half';

// Two pods, one per node, a spare node: new pod 1 binds at once; old pod 1 leaves 2.1 s after new pod
// 1 is Ready (minReadySeconds 2 s, the Deployment 0.1 s); new pod 2 binds 0.3 s after old pod 1's exit.
const NEW = [
  { scheduledMs: 9000, readyMs: 10_400 },
  { scheduledMs: 300, readyMs: 1800 },
];
const OLD = [
  { fromMs: 12_500, toMs: 17_400 },
  { fromMs: 3900, toMs: 8700 },
];

test('the terms follow the chain and add up to the duration', () => {
  const c = rolloutChain(NEW, OLD, 2, 17_650);
  assert.deepEqual(c, { reactionsMs: 300 + 100 + 300 + 100, startsMs: 1500 + 1400, minReadyMs: 4000, leavingMs: 4800 + 4900, tailMs: 250 });
  assert.equal(c!.reactionsMs + c!.startsMs + c!.minReadyMs + c!.leavingMs + c!.tailMs, 17_650);
});

test('no chain where a new pod bound before the old pod it follows had left, or an old pod left before its new pod was Ready, or the counts differ', () => {
  assert.equal(rolloutChain([NEW[1]!, { scheduledMs: 8000, readyMs: 9400 }], OLD, 2, 17_400), null);
  assert.equal(rolloutChain(NEW, [{ fromMs: 1000, toMs: 8700 }, OLD[0]!], 2, 17_400), null);
  assert.equal(rolloutChain(NEW, OLD.slice(0, 1), 2, 17_400), null);
});
