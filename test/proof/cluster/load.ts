/**
 * The clients of a cluster run: load-main.ts as a child process in the outside namespace, stopped
 * with SIGTERM (requests in flight finish), its LoadResult read from its stdout.
 */
import { join } from 'node:path';
import type { LoadOptions, LoadResult } from '../../../src/verify/load';
import { Proc, waitFor } from '../harness/proc';
import { REPO_ROOT } from '../../support/repo';
import { clusterEnv } from './kubectl';
import { OUTSIDE } from './layout';
import { inNetns } from './sh';

export class ClusterLoad {
  private constructor(
    private readonly proc: Proc,
    readonly startedMs: number,
  ) {}

  static async start(options: Omit<LoadOptions, 'paths'> & { path?: string }): Promise<ClusterLoad> {
    const [cmd, ...args] = inNetns(OUTSIDE.netns, process.execPath, [join(REPO_ROOT, 'dist/test/proof/cluster/load-main.js'), JSON.stringify(options)]);
    const proc = new Proc('load', cmd!, args, clusterEnv());
    const line = await waitFor(
      'the load to start',
      10_000,
      () => {
        if (!proc.running) throw new Error(`the load exited: ${proc.tail()}`);
        return proc.output.find((l) => l.stream === 'stdout' && l.text.startsWith('started '));
      },
      20,
    );
    return new ClusterLoad(proc, Number(line.text.split(' ')[1]));
  }

  /**
   * Stops starting requests (unless `stop` is false: the load then ends by its own bound); resolves
   * with every request's record once the ones in flight ended.
   */
  async finish(timeoutMs = 60_000, stop = true): Promise<LoadResult> {
    if (stop) this.proc.signal('SIGTERM');
    const timer = setTimeout(() => this.proc.signal('SIGKILL'), timeoutMs);
    // Its result is one JSON line of every request's record (megabytes): read to the pipe's end,
    // which the process's 'exit' can precede.
    const { code, signal } = await this.proc.exited;
    await this.proc.drained;
    clearTimeout(timer);
    const json = this.proc.output.filter((l) => l.stream === 'stdout' && l.text.startsWith('{')).at(-1);
    if (!json) throw new Error(`the load printed no result (exit ${signal ?? code}, bound ${timeoutMs} ms): ${this.proc.tail()}`);
    return JSON.parse(json.text) as LoadResult;
  }
}
