/**
 * The experiment's load: workers that each send one request after another through the Service, a
 * new connection per request (as busybox wget does), and sort every request that did not succeed
 * by what the client saw:
 * - refused/reset: no response at all (the connection was refused or closed before any byte: the
 *   request reached a pod that no longer listened);
 * - 5xx: a response with a 5xx status;
 * - cut: a response started (status and headers came) and broke off (the pod died mid-request);
 * - timeout: nothing ended it within the client's timeout.
 */
import { request } from 'node:http';

export type Outcome = 'ok' | 'refusedReset' | 'http5xx' | 'cut' | 'timeout';
export const FAILURE_KINDS = ['refusedReset', 'http5xx', 'cut', 'timeout'] as const;

export type RequestRecord = { worker: number; startMs: number; endMs: number; ms: number; outcome: Outcome; detail: string };

export type LoadOptions = {
  port: number;
  workers: number;
  /** The next request's length in milliseconds (real time). */
  nextMs: () => number;
  timeoutMs: number;
};

function one(port: number, ms: number, timeoutMs: number): Promise<{ outcome: Outcome; detail: string }> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (outcome: Outcome, detail: string) => {
      if (settled) return;
      settled = true;
      resolve({ outcome, detail });
    };
    let headers = false;
    const req = request({ host: '127.0.0.1', port, path: `/slow?ms=${Math.round(ms)}`, agent: false, headers: { connection: 'close' } }, (res) => {
      headers = true;
      const status = res.statusCode ?? 0;
      res.resume();
      res.on('end', () => {
        if (status >= 500) done('http5xx', `HTTP ${status}`);
        else if (status === 200 && res.complete) done('ok', '');
        else done('cut', `HTTP ${status}, incomplete`);
      });
      res.on('aborted', () => done('cut', 'response aborted'));
      res.on('error', (e) => done('cut', e.message));
      res.on('close', () => {
        if (!res.complete) done('cut', 'connection closed mid-response');
      });
    });
    req.setTimeout(timeoutMs, () => {
      done('timeout', headers ? 'timeout after headers' : 'timeout before headers');
      req.destroy();
    });
    req.on('error', (e: NodeJS.ErrnoException) => done(headers ? 'cut' : 'refusedReset', e.code ?? e.message));
    req.end();
  });
}

/** Workers sending requests until told to stop; the in-flight ones can be finished or abandoned. */
export class Load {
  readonly records: RequestRecord[] = [];
  private issuing = true;
  private abandoned = false;
  private inFlight = 0;
  private readonly workers: Promise<void>[];

  constructor(private readonly options: LoadOptions) {
    this.workers = Array.from({ length: options.workers }, (_, w) => this.worker(w));
  }

  private async worker(w: number): Promise<void> {
    while (this.issuing) {
      const ms = this.options.nextMs();
      const startMs = Date.now();
      this.inFlight++;
      const r = await one(this.options.port, ms, this.options.timeoutMs);
      this.inFlight--;
      // Requests still running when the run ends are on pods that stay: neither a success nor a failure.
      if (this.abandoned) return;
      this.records.push({ worker: w, startMs, endMs: Date.now(), ms, ...r });
    }
  }

  /** No new requests; resolves when the workers' last requests have ended. */
  async finish(): Promise<void> {
    this.issuing = false;
    await Promise.all(this.workers);
  }

  /**
   * No new requests, and the ones in flight are not waited for nor counted: called once every pod
   * that left has exited, so whatever still runs is on a pod that stays. Returns how many.
   */
  abandon(): number {
    this.issuing = false;
    this.abandoned = true;
    return this.inFlight;
  }

  counts(): Record<Outcome, number> {
    const c: Record<Outcome, number> = { ok: 0, refusedReset: 0, http5xx: 0, cut: 0, timeout: 0 };
    for (const r of this.records) c[r.outcome]++;
    return c;
  }
}
