import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubectlShim, shimCalls } from '../support/kubectl-shim';
import type { VerifyReport } from '../../src/verify/report';
import { REPO_ROOT } from '../support/repo';

type Result = { code: number | null; stdout: string; stderr: string };

/** The real launcher, asynchronously: the target server runs in this process and must keep answering. */
function verify(args: string[], opts: { interruptAfterMs?: number; timeoutMs?: number } = {}): Promise<Result> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'gracegate.js'), 'verify', ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    const kill = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 20_000);
    if (opts.interruptAfterMs !== undefined) setTimeout(() => child.kill('SIGINT'), opts.interruptAfterMs);
    child.on('close', (code) => {
      clearTimeout(kill);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A target: /ok answers 200, /slow?ms=N after N ms, anything else 404. */
async function target(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/ok') return void res.end('ok\n');
    if (u.pathname === '/slow') return void setTimeout(() => res.end('ok\n'), Number(u.searchParams.get('ms') ?? 0));
    res.statusCode = 404;
    res.end('no\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const TERM = ['--terminate', 'true'];

for (const [args, message] of [
  [[...TERM], /--url is required/],
  [['--url', 'http://127.0.0.1:9/'], /--terminate is required/],
  [['--url', 'not a url', ...TERM], /--url must be an absolute http\(s\) URL, got 'not a url'/],
  [['--url', 'ftp://example.com/', ...TERM], /--url must be http or https/],
  [['--url', 'http://u:p@127.0.0.1/', ...TERM], /--url must not carry credentials/],
  [['--url', 'http://127.0.0.1:9/', ...TERM, '--rps', '5000'], /--rps must be between 1 and 1000, got 5000/],
  [['--url', 'http://127.0.0.1:9/', ...TERM, '--connections', '0'], /--connections must be between 1 and 64/],
  [['--url', 'http://127.0.0.1:9/', ...TERM, '--duration', '2h'], /--duration must be at most 1800 s/],
  [['--url', 'http://127.0.0.1:9/', ...TERM, '--terminate-at', '70s'], /--terminate-at \(70 s\) must come before the end of --duration \(60 s\)/],
  [['--url', 'http://127.0.0.1:9/', ...TERM, '--scenario', 's9'], /--scenario must be one of s1, s3, s4, s5, rolling, got 's9'/],
  [['--url', 'http://127.0.0.1:9/', ...TERM, '--scenario', 's1'], /--scenario s1 needs --slow-path/],
  [['--url', 'http://127.0.0.1:9/', ...TERM, '--slow-path', '/delay'], /--slow-path must contain \{ms\}/],
  [['--url', 'http://127.0.0.1:9/', ...TERM, '--header', 'no colon'], /--header must be 'Name: value'/],
  [['--url', 'http://127.0.0.1:9/', '--terminate', ' '], /--terminate is empty/],
  [['--url', 'http://127.0.0.1:9/', ...TERM, '--format', 'xml'], /--format must be text or json/],
  [['--url', 'http://127.0.0.1:9/', ...TERM, '--pod-state'], /--pod-state needs --spec/],
  [['--url', 'http://127.0.0.1:9/', ...TERM, '--kubectl', '/bin/true'], /--kubectl is used only with --pod-state/],
] as Array<[string[], RegExp]>) {
  test(`verify ${args.join(' ')}: exit 2 naming the flag`, async () => {
    const r = await verify(args);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stdout, '');
  });
}

test('verify: an unreachable target is named, exit 2, before any load or termination', async () => {
  const { server, url } = await target();
  await new Promise<void>((r) => server.close(() => r()));
  const r = await verify(['--url', `${url}/ok`, '--terminate', 'echo ran > /dev/stderr']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, new RegExp(`--url ${url}/ok: connection refused`));
  assert.doesNotMatch(r.stderr, /ran/);
});

test("verify: a target that does not answer 200 is refused before the run (every failure must be the termination's)", async () => {
  const { server, url } = await target();
  try {
    const r = await verify(['--url', `${url}/missing`, ...TERM]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /answered HTTP 404 before any termination/);
  } finally {
    server.close();
  }
});

test('verify: a termination command that fails stops the load, is named with its exit code and output, exit 2, no report', async () => {
  const { server, url } = await target();
  try {
    const r = await verify([
      '--url',
      `${url}/ok`,
      '--terminate',
      'echo no such pod >&2; exit 3',
      '--terminate-at',
      '0.3s',
      '--duration',
      '10s',
      '--format',
      'json',
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--terminate 'echo no such pod >&2; exit 3' exited 3; its last output: no such pod/);
    assert.equal(r.stdout, '');
  } finally {
    server.close();
  }
});

test('verify: an --observe command that fails is named the same way', async () => {
  const { server, url } = await target();
  try {
    const r = await verify(['--url', `${url}/ok`, ...TERM, '--observe', 'exit 4', '--terminate-at', '0.3s', '--duration', '10s']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--observe 'exit 4' exited 4/);
  } finally {
    server.close();
  }
});

test('verify: the load stays under --rps, stops at the observe command plus --tail, and reports 0 failures as a pass', async () => {
  const { server, url } = await target();
  let served = 0;
  server.on('request', () => {
    served++;
  });
  try {
    const r = await verify([
      '--url',
      `${url}/slow?ms=10`,
      '--slow-path',
      '/slow?ms={ms}',
      ...TERM,
      '--observe',
      'sleep 0.5',
      '--terminate-at',
      '0.5s',
      '--tail',
      '0.5s',
      '--duration',
      '20s',
      '--rps',
      '40',
      '--connections',
      '8',
      '--format',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as VerifyReport;
    assert.equal(report.stoppedBy, 'observe');
    assert.equal(report.failures, 0);
    assert.deepEqual(report.failuresByKind, {});
    assert.equal(report.verdict.status, 'pass');
    assert.equal(report.requests, served - 1, 'every request the server saw, but the preflight');
    // 40/s over the load's length (start at -0.5 s to the end), plus the first slot of each second boundary.
    const seconds = (report.loadEndMs - report.loadStartMs) / 1000;
    assert.ok(report.requests <= Math.ceil(seconds * 40) + 1, `${report.requests} requests in ${seconds} s at --rps 40`);
    assert.ok(seconds < 5, `stopped after the observe command (0.5 s) + tail (0.5 s), not at --duration: ${seconds} s`);
  } finally {
    server.close();
  }
});

test('verify: a termination command still running at the end of --duration is stopped with its process group; the run reports, it does not fail', async () => {
  const { server, url } = await target();
  try {
    const started = Date.now();
    const r = await verify(['--url', `${url}/ok`, '--terminate', 'sleep 30; echo never', '--terminate-at', '0.3s', '--duration', '2s', '--format', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(Date.now() - started < 10_000, 'the run ended with --duration, not with the command');
    const report = JSON.parse(r.stdout) as VerifyReport;
    assert.equal(report.stoppedBy, 'duration');
    assert.equal(report.terminate?.code, null);
    assert.equal(report.terminate?.signal, 'SIGTERM');
    assert.doesNotMatch(report.terminate?.output ?? '', /never/);
  } finally {
    server.close();
  }
});

test('verify: Ctrl-C ends the run at once with the partial report; requests it cut are cancelled, not failures', async () => {
  const { server, url } = await target();
  try {
    const r = await verify(
      ['--url', `${url}/slow?ms=10`, '--slow-path', '/slow?ms={ms}', ...TERM, '--terminate-at', '0.3s', '--duration', '60s', '--format', 'json'],
      { interruptAfterMs: 2000 },
    );
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as VerifyReport;
    assert.equal(report.stoppedBy, 'interrupt');
    assert.ok(report.requests > 0);
    assert.equal(report.failures, 0, JSON.stringify(report.failed));
    assert.ok(report.loadEndMs < 10_000, `ended ${report.loadEndMs} ms after the termination, not at --duration`);
  } finally {
    server.close();
  }
});

const SPEC = join(REPO_ROOT, 'examples', 'haproxy.yaml');

test("verify --pod-state: pods that cannot be listed are exit 2 with kubectl's message, before any load or termination", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gg-podstate-'));
  try {
    const kubectl = join(dir, 'kubectl');
    writeFileSync(kubectl, '#!/bin/sh\necho \'Error from server (Forbidden): pods is forbidden: User "ci" cannot list resource "pods"\' >&2\nexit 1\n');
    chmodSync(kubectl, 0o755);
    const r = await verify(['--url', 'http://127.0.0.1:9/', '--terminate', 'echo ran > /dev/stderr', '--spec', SPEC, '--pod-state', '--kubectl', kubectl]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--pod-state: kubectl get pods -n \S+ -l app=\S+ failed: Error from server \(Forbidden\): pods is forbidden/);
    assert.doesNotMatch(r.stderr, /ran/);
    assert.equal(r.stdout, '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('verify --pod-state: a pod whose /state cannot be read is counted with the last error, never fatal', async () => {
  const { server, url } = await target();
  const dir = mkdtempSync(join(tmpdir(), 'gg-podstate-'));
  try {
    // The pod's config names a control port nothing listens on: kubectl exec runs gracegate state, which fails.
    const config = join(dir, 'hc.json');
    writeFileSync(config, JSON.stringify({ controlPort: 9 }));
    const log = join(dir, 'calls.log');
    const kubectl = kubectlShim(dir, { pods: { 'igw-a': config }, log });
    const r = await verify([
      '--url',
      `${url}/ok`,
      ...TERM,
      '--terminate-at',
      '0.5s',
      '--duration',
      '2s',
      '--spec',
      SPEC,
      '--pod-state',
      '--kubectl',
      kubectl,
      '--format',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as VerifyReport;
    assert.deepEqual(
      report.podStates!.map((p) => [p.pod, p.state, p.terminated]),
      [['igw-a', null, false]],
    );
    const polling = report.podStatePolling!;
    assert.ok(polling.polls >= 1 && polling.failures === polling.polls, JSON.stringify(polling));
    assert.match(polling.lastError!, /^igw-a: .*did not answer GET \/state/);
    const execs = shimCalls(log).filter((c) => c.args[0] === 'exec');
    assert.equal(execs.length, polling.polls);
    assert.ok(
      execs.every((c) => c.ran !== undefined),
      'each poll ran gracegate state',
    );
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
