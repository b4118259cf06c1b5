/**
 * A real Prometheus (Debian's package, installed by scripts/prepare-test-env.sh) on loopback, with
 * a config the test writes, queried over its HTTP API. Test support, not shipped. With a `prefix`
 * (`nsenter --net=… --`) it runs inside a network namespace, on that namespace's loopback, and
 * every request to its API is made from inside it too.
 */
import { execFile, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { type Proc, startDaemon } from './daemon';
import { freePort } from './real-envoy';

export interface Sample {
  readonly metric: Record<string, string>;
  readonly value?: [number, string];
  readonly values?: [number, string][];
}

export interface Prometheus {
  readonly url: string;
  /** Instant query (at `time`, epoch seconds, default now). */
  query(expr: string, time?: number): Promise<Sample[]>;
  /** Range query, step in seconds. */
  queryRange(expr: string, start: number, end: number, step: number): Promise<Sample[]>;
  /** Active alerts (pending and firing). */
  alerts(): Promise<{ labels: Record<string, string>; state: string }[]>;
  targets(): Promise<{ labels: Record<string, string>; health: string; lastError: string }[]>;
  logs(): string;
  stop(): Promise<void>;
}

function prometheusBinary(): string {
  const found = spawnSync('sh', ['-c', 'command -v prometheus'], { encoding: 'utf8' }).stdout.trim();
  if (!found) throw new Error('prometheus is not installed: run `bash scripts/prepare-test-env.sh` (apt-get install prometheus)');
  return found;
}

type ApiAnswer = { status: string; data: unknown; error?: string };

/** A GET from inside the namespace `prefix` enters: Node's fetch, run there (bounded). */
const FETCH_IN_NETNS =
  'fetch(process.argv[1],{signal:AbortSignal.timeout(Number(process.argv[2]))}).then(async(r)=>process.stdout.write(r.status+"\\n"+(await r.text())),(e)=>{process.stderr.write(String(e));process.exit(2)})';

function getInNetns(prefix: readonly string[], url: string, timeoutMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      prefix[0]!,
      [...prefix.slice(1), process.execPath, '-e', FETCH_IN_NETNS, url, String(timeoutMs)],
      { timeout: timeoutMs + 5000, maxBuffer: 32 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`${url} (in ${prefix.join(' ')}): ${stderr || err.message}`));
        const nl = stdout.indexOf('\n');
        resolve({ status: Number(stdout.slice(0, nl)), body: stdout.slice(nl + 1) });
      },
    );
  });
}

function getJson(url: string, timeoutMs = 5000, prefix?: readonly string[]): Promise<ApiAnswer> {
  if (prefix)
    return getInNetns(prefix, url, timeoutMs).then(({ status, body }) => {
      try {
        return JSON.parse(body) as ApiAnswer;
      } catch {
        throw new Error(`${url}: HTTP ${status} ${body.slice(0, 300)}`);
      }
    });
  return new Promise((resolve, reject) => {
    const req = http.get(url, { signal: AbortSignal.timeout(timeoutMs) }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        try {
          resolve(JSON.parse(body) as { status: string; data: unknown; error?: string });
        } catch {
          reject(new Error(`${url}: HTTP ${res.statusCode} ${body.slice(0, 300)}`));
        }
      });
    });
    req.on('error', reject);
  });
}

/**
 * Starts Prometheus with `config` (the prometheus.yml as an object) and `ruleFiles` (name → text,
 * written beside it and listed under rule_files). Resolves once /-/ready answers.
 */
export async function startPrometheus(
  config: Record<string, unknown>,
  ruleFiles: Record<string, string> = {},
  opts: { prefix?: readonly string[] } = {},
): Promise<Prometheus> {
  const prefix = opts.prefix?.length ? opts.prefix : undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gracegate-prometheus-'));
  for (const [name, text] of Object.entries(ruleFiles)) fs.writeFileSync(path.join(dir, name), text);
  const configPath = path.join(dir, 'prometheus.yml');
  fs.writeFileSync(configPath, stringify({ ...config, rule_files: Object.keys(ruleFiles).map((n) => path.join(dir, n)) }));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const argv = [
    prometheusBinary(),
    `--config.file=${configPath}`,
    `--storage.tsdb.path=${path.join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--storage.tsdb.retention.time=2h',
    '--log.level=warn',
  ];
  const [cmd, ...args] = prefix ? [...prefix, ...argv] : argv;
  const ready = () =>
    prefix
      ? getInNetns(prefix, `${url}/-/ready`, 2000).then(
          (r) => r.status === 200,
          () => false,
        )
      : new Promise<boolean>((resolve) => {
          http
            .get(`${url}/-/ready`, (res) => {
              res.resume();
              resolve(res.statusCode === 200);
            })
            .on('error', () => resolve(false));
        });
  let proc: Proc;
  try {
    proc = await startDaemon('prometheus', [cmd!, ...args], ready, { withinMs: 20_000, everyMs: 100 });
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const log = () => proc.stderrText();
  const stop = async () => {
    await proc.stop(5000);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const api = async <T>(pathAndQuery: string): Promise<T> => {
    const answer = await getJson(`${url}${pathAndQuery}`, 5000, prefix);
    if (answer.status !== 'success') throw new Error(`${pathAndQuery}: ${answer.error ?? JSON.stringify(answer)}`);
    return answer.data as T;
  };
  const q = encodeURIComponent;
  return {
    url,
    query: async (expr, time) => (await api<{ result: Sample[] }>(`/api/v1/query?query=${q(expr)}${time === undefined ? '' : `&time=${time}`}`)).result,
    queryRange: async (expr, start, end, step) =>
      (await api<{ result: Sample[] }>(`/api/v1/query_range?query=${q(expr)}&start=${start}&end=${end}&step=${step}`)).result,
    alerts: async () => (await api<{ alerts: { labels: Record<string, string>; state: string }[] }>('/api/v1/alerts')).alerts,
    targets: async () =>
      (await api<{ activeTargets: { labels: Record<string, string>; health: string; lastError: string }[] }>('/api/v1/targets')).activeTargets,
    logs: log,
    stop,
  };
}
