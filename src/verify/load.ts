/**
 * The load generator: keep-alive HTTP/1.1 clients through the LB, a mix of request lengths and
 * streaming responses, and honest counting: every request started ends in exactly one outcome,
 * classified by what the client saw (status, reset, refused, timeout, truncated stream). One
 * implementation for `gracegate verify` and the end-to-end harness (test/proof/harness), so the
 * user's count and the lab's are made the same way.
 */
import { setMaxListeners } from 'node:events';
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { keyedRandom } from '../core/keyed-random';

/** A keep-alive agent of either scheme (node:https's Agent extends node:http's). */
export type Agent = HttpAgent;

export type RequestSpec =
  | { kind: 'slow'; ms: number }
  /** A streamed response of `chunks` chunks, one every `intervalMs`. */
  | { kind: 'stream'; chunks: number; intervalMs: number };

export type Paths = {
  slow: (ms: number) => string;
  stream: (chunks: number, intervalMs: number) => string;
};

/**
 * What the client saw. `cancelled` is the load's own doing (Ctrl-C ended a request it had in
 * flight), never the target's: it is not a failure.
 */
export type Outcome = 'ok' | `http-${number}` | 'ECONNRESET' | 'ECONNREFUSED' | 'timeout' | 'truncated' | 'cancelled' | `error-${string}`;

export type RequestRecord = {
  spec: RequestSpec;
  startMs: number;
  endMs: number;
  outcome: Outcome;
  /** Streams: chunks received and expected. */
  chunks?: { received: number; expected: number };
  worker: number;
  /** The client's local port (to find the request in the LB's log); null when no socket was bound. */
  clientPort: number | null;
  /** True when the request went out on a connection an earlier request had used (keep-alive reuse). */
  reusedConnection: boolean;
  /** A scenario's own name for a request it started on purpose ('long request'); none for the steady load's. */
  label?: string;
};

export type InFlightSample = { atMs: number; inFlight: number };

export type LoadResult = {
  records: RequestRecord[];
  samples: InFlightSample[];
  startMs: number;
  endMs: number;
};

export type LoadOptions = {
  baseUrl: string;
  paths: Paths;
  workers: number;
  /** Stop starting new requests after this long. */
  durationMs: number;
  /** Stop starting new requests after this many in total. */
  maxRequests?: number;
  /** Request mix; each worker picks by weight with its own seeded generator. */
  mix: Array<{ weight: number; spec: RequestSpec }>;
  /** A request that has not finished after this long counts as a timeout. */
  requestTimeoutMs: number;
  sampleEveryMs?: number;
  /** Keys each worker's random generator: the same key, the same request sequence. */
  mixKey?: number;
  /** At most this many requests start per second, over all workers (none: each worker sends its next request at once). */
  ratePerSecond?: number;
  /** Sent with every request (a Host header to reach one virtual host through an LB address). */
  headers?: Record<string, string>;
  /** https: accept a certificate that does not verify (a staging gateway's self-signed one). */
  insecure?: boolean;
};

/** How a request goes out besides its URL: headers, TLS checking, and a signal that cancels it. */
export type SendOptions = { headers?: Record<string, string>; insecure?: boolean; signal?: AbortSignal };

/** A keep-alive agent for `baseUrl`'s scheme, one connection at a time. */
export function keepAliveAgent(baseUrl: string, insecure = false): Agent {
  return baseUrl.startsWith('https:')
    ? new HttpsAgent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: !insecure })
    : new HttpAgent({ keepAlive: true, maxSockets: 1 });
}

function requestFor(url: string, options: RequestOptions & { rejectUnauthorized?: boolean }, onResponse: (res: IncomingMessage) => void): ClientRequest {
  return url.startsWith('https:') ? httpsRequest(url, options, onResponse) : httpRequest(url, options, onResponse);
}

/** mulberry32: a small seeded generator, so a run's request sequence is reproducible. */
function classifyError(err: NodeJS.ErrnoException): Outcome {
  if (err.code === 'ECONNRESET' || err.message === 'socket hang up') return 'ECONNRESET';
  if (err.code === 'ECONNREFUSED') return 'ECONNREFUSED';
  if (err.code === 'E2E_TIMEOUT') return 'timeout';
  return `error-${err.code ?? err.message}`;
}

/**
 * One request on `agent`. A stream counts its chunks (newline-terminated lines); a stream that
 * ends early, or a body cut by a reset after the headers, is `truncated`.
 */
export function sendOne(
  baseUrl: string,
  paths: Paths,
  spec: RequestSpec,
  agent: Agent | false,
  timeoutMs: number,
  worker = 0,
  send: SendOptions = {},
): Promise<RequestRecord> {
  const startMs = Date.now();
  const path = spec.kind === 'slow' ? paths.slow(spec.ms) : paths.stream(spec.chunks, spec.intervalMs);
  return new Promise((resolve) => {
    let settled = false;
    let received = 0;
    let pending = '';
    let clientPort: number | null = null;
    let reusedConnection = false;
    const finish = (outcome: Outcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        spec,
        startMs,
        endMs: Date.now(),
        outcome,
        worker,
        clientPort,
        reusedConnection,
        ...(spec.kind === 'stream' ? { chunks: { received, expected: spec.chunks } } : {}),
      });
    };
    const options = { agent, ...(send.headers ? { headers: send.headers } : {}), ...(send.insecure ? { rejectUnauthorized: false } : {}) };
    const req = requestFor(`${baseUrl}${path}`, options, (res) => {
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        // Only a 200 carries the stream; an error page's lines are not chunks.
        if (res.statusCode !== 200) return;
        pending += c;
        const parts = pending.split('\n');
        pending = parts.pop()!;
        received += parts.length;
      });
      res.on('end', () => {
        if (res.statusCode !== 200) finish(`http-${res.statusCode ?? 0}`);
        else if (spec.kind === 'stream' && received < spec.chunks) finish('truncated');
        else finish('ok');
      });
      res.on('aborted', () => finish(res.statusCode === 200 ? 'truncated' : `http-${res.statusCode ?? 0}`));
      res.on('error', () => finish(res.statusCode === 200 ? 'truncated' : `http-${res.statusCode ?? 0}`));
    });
    const timer = setTimeout(() => {
      const err: NodeJS.ErrnoException = new Error('request timeout');
      err.code = 'E2E_TIMEOUT';
      req.destroy(err);
      finish('timeout');
    }, timeoutMs);
    const cancel = (): void => {
      finish('cancelled');
      req.destroy();
    };
    if (send.signal?.aborted) cancel();
    send.signal?.addEventListener('abort', cancel, { once: true });
    req.on('close', () => send.signal?.removeEventListener('abort', cancel));
    req.on('error', (err: NodeJS.ErrnoException) => finish(classifyError(err)));
    req.on('socket', (socket) => {
      reusedConnection = req.reusedSocket;
      const note = (): void => {
        clientPort = socket.localPort ?? null;
      };
      if (socket.localPort !== undefined) note();
      else socket.once('connect', note);
    });
    req.end();
  });
}

/** Runs the load until `durationMs` (or `maxRequests`), then waits for the requests in flight. */
export class LoadGenerator {
  readonly records: RequestRecord[] = [];
  readonly samples: InFlightSample[] = [];
  private inFlight = 0;
  private started = 0;
  private stopAt = 0;
  private startMs = 0;
  /** The next instant a request may start under ratePerSecond. */
  private nextSlot = 0;
  private readonly cancelling = new AbortController();

  constructor(private readonly o: LoadOptions) {}

  get inFlightNow(): number {
    return this.inFlight;
  }

  /** Starts no new request from now on (the ones in flight finish). */
  stop(): void {
    this.stopAt = Math.min(this.stopAt, Date.now());
  }

  /** Stops, and ends the requests in flight now (each counts as `cancelled`, not as a failure). */
  cancel(): void {
    this.stop();
    this.cancelling.abort();
  }

  /** Waits for this request's slot under ratePerSecond; false when the load stopped meanwhile. */
  private async slot(): Promise<boolean> {
    const rate = this.o.ratePerSecond;
    if (rate === undefined) return true;
    const at = Math.max(Date.now(), this.nextSlot);
    this.nextSlot = at + 1000 / rate;
    const wait = at - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    return Date.now() < this.stopAt;
  }

  async run(): Promise<LoadResult> {
    this.startMs = Date.now();
    this.stopAt = this.startMs + this.o.durationMs;
    const sampler = setInterval(() => this.samples.push({ atMs: Date.now(), inFlight: this.inFlight }), this.o.sampleEveryMs ?? 50);
    const totalWeight = this.o.mix.reduce((s, m) => s + m.weight, 0);
    // Each worker has one request in flight, each with one abort listener on the cancel signal,
    // and the previous request's listener goes only at its 'close', which can come after the next
    // request started: up to two per worker is expected, not a leak (Node warns from 11).
    setMaxListeners(2 * this.o.workers + 1, this.cancelling.signal);
    const workers = Array.from({ length: this.o.workers }, async (_, w) => {
      const agent = keepAliveAgent(this.o.baseUrl, this.o.insecure);
      const rand = keyedRandom((this.o.mixKey ?? 1) * 1000 + w);
      const send: SendOptions = {
        ...(this.o.headers ? { headers: this.o.headers } : {}),
        ...(this.o.insecure ? { insecure: true } : {}),
        signal: this.cancelling.signal,
      };
      try {
        while (Date.now() < this.stopAt && (this.o.maxRequests === undefined || this.started < this.o.maxRequests)) {
          if (!(await this.slot())) break;
          let pick = rand() * totalWeight;
          const spec = this.o.mix.find((m) => (pick -= m.weight) < 0)?.spec ?? this.o.mix[0]!.spec;
          this.started++;
          this.inFlight++;
          const rec = await sendOne(this.o.baseUrl, this.o.paths, spec, agent, this.o.requestTimeoutMs, w, send);
          this.inFlight--;
          this.records.push(rec);
        }
      } finally {
        agent.destroy();
      }
    });
    await Promise.all(workers);
    clearInterval(sampler);
    this.samples.push({ atMs: Date.now(), inFlight: this.inFlight });
    return { records: this.records, samples: this.samples, startMs: this.startMs, endMs: Date.now() };
  }
}

/** Client failures by kind (everything that is not `ok`, nor `cancelled` by the load itself). */
export function failuresByKind(records: readonly RequestRecord[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of records) if (r.outcome !== 'ok' && r.outcome !== 'cancelled') out[r.outcome] = (out[r.outcome] ?? 0) + 1;
  return out;
}
