/**
 * Runs `gracegate` inside a cgroup from its first line (bench/hc-cpu-share-bench.ts): moves this
 * process into the cgroup v1 group GRACEGATE_BENCH_CGROUP names, then runs the CLI as
 * bin/gracegate.js would (GRACEGATE_BENCH_BIN: another build's). The arguments are the CLI's, so
 * test/support/hc.ts spawnHc runs it through GRACEGATE_HC_BIN. Only Node's own boot, before this
 * line, runs outside the group.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const group = process.env['GRACEGATE_BENCH_CGROUP'];
if (!group) throw new Error('cgroup-exec: GRACEGATE_BENCH_CGROUP is not set');
writeFileSync(join(group, 'cgroup.procs'), String(process.pid));
require(process.env['GRACEGATE_BENCH_BIN'] ?? join(__dirname, '..', '..', 'bin', 'gracegate.js'));
