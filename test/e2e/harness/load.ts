/**
 * The load generator: keep-alive HTTP/1.1 clients through the LB, a mix of request lengths and
 * streaming responses, and honest counting: every request started ends in exactly one outcome,
 * classified by what the client saw (status, reset, refused, timeout, truncated stream).
 */
import { Agent, request } from 'node:http';

export type RequestSpec =
  | { kind: 'slow'; ms: number }
  /** A streamed response of `chunks` chunks, one every `intervalMs`. */
  | { kind: 'stream'; chunks: number; intervalMs: number };

export type Paths = {
  slow: (ms: number) => string;
  stream: (chunks: number, intervalMs: number) => string;
};

export type Outcome = 'ok' | `http-${number}` | 'ECONNRESET' | 'ECONNREFUSED' | 'timeout' | 'truncated' | `error-${string}`;

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
  seed?: number;
};

/** mulberry32: a small seeded generator, so a run's request sequence is reproducible. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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
export function sendOne(baseUrl: string, paths: Paths, spec: RequestSpec, agent: Agent | false, timeoutMs: number, worker = 0): Promise<RequestRecord> {
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
      resolve({ spec, startMs, endMs: Date.now(), outcome, worker, clientPort, reusedConnection, ...(spec.kind === 'stream' ? { chunks: { received, expected: spec.chunks } } : {}) });
    };
    const req = request(`${baseUrl}${path}`, { agent }, (res) => {
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
    req.on('error', (err: NodeJS.ErrnoException) => finish(classifyError(err)));
    req.on('socket', (socket) => {
      reusedConnection = req.reusedSocket;
      const note = (): void => { clientPort = socket.localPort ?? null; };
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

  constructor(private readonly o: LoadOptions) {}

  get inFlightNow(): number {
    return this.inFlight;
  }

  /** Starts no new request from now on (the ones in flight finish). */
  stop(): void {
    this.stopAt = Math.min(this.stopAt, Date.now());
  }

  async run(): Promise<LoadResult> {
    this.startMs = Date.now();
    this.stopAt = this.startMs + this.o.durationMs;
    const sampler = setInterval(() => this.samples.push({ atMs: Date.now(), inFlight: this.inFlight }), this.o.sampleEveryMs ?? 50);
    const totalWeight = this.o.mix.reduce((s, m) => s + m.weight, 0);
    const workers = Array.from({ length: this.o.workers }, async (_, w) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const rand = seeded((this.o.seed ?? 1) * 1000 + w);
      try {
        while (Date.now() < this.stopAt && (this.o.maxRequests === undefined || this.started < this.o.maxRequests)) {
          let pick = rand() * totalWeight;
          const spec = this.o.mix.find((m) => (pick -= m.weight) < 0)?.spec ?? this.o.mix[0]!.spec;
          this.started++;
          this.inFlight++;
          const rec = await sendOne(this.o.baseUrl, this.o.paths, spec, agent, this.o.requestTimeoutMs, w);
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

/** Client failures by kind (everything that is not `ok`). */
export function failuresByKind(records: RequestRecord[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of records) if (r.outcome !== 'ok') out[r.outcome] = (out[r.outcome] ?? 0) + 1;
  return out;
}
