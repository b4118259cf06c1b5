/**
 * The upstream app of a load pod (app/main.go): compiled, one per pod, logging every request by its
 * x-request-id (when it started and ended, and whether the answer was written).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, Proc, waitFor } from '../harness/proc';
import { loadAppBinary } from './tools';

export type AppRecord = { startMs: number; endMs: number; outcome: 'done' | 'aborted' };

export class LoadApp {
  private constructor(
    readonly name: string,
    readonly port: number,
    readonly logFile: string,
    readonly proc: Proc,
  ) {}

  static async start(name: string, dir: string): Promise<LoadApp> {
    const port = await freePort();
    const logFile = join(dir, `${name}-app.log`);
    const proc = new Proc(`${name}/app`, loadAppBinary(), ['-listen', `127.0.0.1:${port}`, '-log', logFile]);
    await waitFor(`${name}: the load app listening`, 10_000, () => {
      if (!proc.running) throw new Error(proc.tail());
      return proc.output.some((l) => l.text.startsWith('listening ')) ? true : undefined;
    });
    return new LoadApp(name, port, logFile, proc);
  }

  /** Every request the app logged, by id (the log is flushed every 100 ms). */
  records(): Map<string, AppRecord> {
    const out = new Map<string, AppRecord>();
    let text = '';
    try {
      text = readFileSync(this.logFile, 'utf8');
    } catch {
      return out;
    }
    for (const line of text.split('\n')) {
      const [id, start, end, outcome] = line.split(' ');
      if (!id || outcome === undefined) continue;
      out.set(id, { startMs: Number(start), endMs: Number(end), outcome: outcome === 'done' ? 'done' : 'aborted' });
    }
    return out;
  }

  async stop(): Promise<void> {
    await this.proc.stop(2000);
  }
}
