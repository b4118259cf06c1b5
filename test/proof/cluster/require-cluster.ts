import { status } from './cluster';

/** Fails a cluster test at once, with what to do, when no cluster is up (npm test starts one). */
export function requireCluster(): void {
  if (!status().ready) throw new Error('the test cluster is not up: npm test starts it; by hand: npm run cluster -- up --bare');
}
