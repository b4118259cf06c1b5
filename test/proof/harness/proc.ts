/**
 * The harness's process and wait helpers, from the suite's rigs: every child process is a Proc of
 * test/support/daemon.ts (its own process group, output kept with arrival times, killed when the
 * test process exits), ports from test/support/ports.ts, waits from test/support/wait.ts.
 */
export { Proc, startDaemon, type OutputLine } from '../../support/daemon';
export { freePort } from '../../support/ports';
export { sleep, waitFor } from '../../support/wait';
