/**
 * The last cluster file (scripts/run-tests.js runs it after every other): `down` leaves nothing on
 * the machine: no process, mount, network namespace, cgroup, host interface, private-address
 * listener, KUBE iptables rule (kube-proxy's or kube-router's) or kube-router ipset in the host's
 * namespace, and no runtime folder.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { down, status } from './cluster';
import { leftovers } from './leftovers';

test('npm run cluster -- down removes every trace of the cluster, and a second down is harmless', { timeout: 180_000 }, async () => {
  await down();
  assert.deepEqual(leftovers(), [], 'nothing of the cluster is left');
  assert.equal(status().ready, false);
  await down();
  assert.deepEqual(leftovers(), []);
});
