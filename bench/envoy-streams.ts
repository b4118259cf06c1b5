/**
 * What the real Envoy does to long-lived streams when the drain starts, on each pinned version:
 * an SSE stream (HTTP/1.1 keep-alive and HTTP/2), a WebSocket and a long chunked download, all
 * started before the sidecar's drain calls (plain drain_listeners, then ?graceful). For each: is it
 * counted (listener / HCM connections, HCM requests, upgrades), is it told to close (Connection:
 * close, GOAWAY, WebSocket close), is it cut at --drain-time-s (the graceful drain's listener stop),
 * and what ends it (the stream's own end, or the process exit).
 *
 * Run: npm run build && node dist/bench/envoy-streams.js [--write]   (about 15 s per version; prints Markdown;
 * --write records it in docs/benchmarks.json, which docs/envoy.md renders)
 */
import * as http from 'node:http';
import * as http2 from 'node:http2';
import WebSocket from 'ws';
import { pinnedEnvoys, startEnvoy, type RealEnvoy } from '../test/support/real-envoy';
import { writeOnExit } from '../test/support/bench-results';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DRAIN_TIME_S = 2;
const OBSERVE_MS = 5000;

interface Stream {
  readonly name: string;
  events: string[];
  /** Data units received after the drain started. */
  afterDrain: number;
  endedAt: number | null;
  endedHow: string | null;
  toldToClose: string | null;
}

function track(name: string): Stream {
  return { name, events: [], afterDrain: 0, endedAt: null, endedHow: null, toldToClose: null };
}

async function measure(version: string) {
  const envoy: RealEnvoy = await startEnvoy({
    version,
    drainTimeS: DRAIN_TIME_S,
    statsInclusionSuffixes: ['downstream_rq_active', 'downstream_cx_upgrades_active'],
  });
  let drainAt = 0;
  const since = () => (drainAt === 0 ? 0 : Date.now() - drainAt);
  const agent = new http.Agent({ keepAlive: true });
  const streams: Stream[] = [];

  const h1 = (name: string, path: string) => {
    const s = track(name);
    streams.push(s);
    const req = http.get(`${envoy.trafficUrl}${path}`, { agent }, (res) => {
      res.on('data', () => drainAt && s.afterDrain++);
      res.on('end', () => ((s.endedAt = since()), (s.endedHow ??= 'ended by the server (stream complete)')));
      res.on('error', (e) => ((s.endedAt = since()), (s.endedHow ??= `cut: ${e.message}`)));
      res.on('close', () => {
        s.endedAt ??= since();
        s.endedHow ??= 'cut: connection closed';
      });
      if (res.headers.connection === 'close') s.toldToClose = 'Connection: close';
    });
    req.on('error', (e) => ((s.endedAt ??= since()), (s.endedHow ??= `cut: ${e.message}`)));
  };
  h1('SSE, HTTP/1.1', '/sse?events=0&intervalMs=200');
  h1('chunked download (8 s), HTTP/1.1', '/stream?chunks=40&intervalMs=200');

  const sse2 = track('SSE, HTTP/2');
  streams.push(sse2);
  const session = http2.connect(envoy.trafficUrl);
  session.on('error', () => {});
  session.on('goaway', (code) => (sse2.toldToClose ??= `GOAWAY ${code} at +${since()} ms`));
  const st = session.request({ ':path': '/sse?events=0&intervalMs=200' });
  st.on('data', () => drainAt && sse2.afterDrain++);
  st.on('close', () => ((sse2.endedAt ??= since()), (sse2.endedHow ??= 'cut: stream closed')));
  st.end();

  const wsS = track('WebSocket');
  streams.push(wsS);
  const ws = new WebSocket(`ws://127.0.0.1:${envoy.trafficPort}/ws`);
  ws.on('error', () => {});
  ws.on('open', () => {
    const tick = setInterval(() => (ws.readyState === WebSocket.OPEN ? ws.send('x') : clearInterval(tick)), 200);
  });
  ws.on('message', () => drainAt && wsS.afterDrain++);
  ws.on('close', (code) => ((wsS.endedAt ??= since()), (wsS.endedHow ??= `closed, code ${code}`)));

  await sleep(800);
  const statsFilter =
    '^(listener\\.0\\.0\\.0\\.0_8080\\.downstream_cx_active|http\\.outbound_0\\.0\\.0\\.0_8080\\.downstream_(cx_active|rq_active|cx_upgrades_active))$';
  const before = await envoy.stats(statsFilter);
  drainAt = Date.now();
  await envoy.admin('POST', '/drain_listeners');
  await envoy.admin('POST', '/drain_listeners?graceful');
  await sleep(OBSERVE_MS);
  const after = await envoy.stats(statsFilter);
  const exitAt = Date.now();
  await envoy.stop();
  await sleep(200);
  for (const s of streams) {
    if (s.endedAt === null) s.endedHow = 'still open after the process exit (?)';
    else if (s.endedAt >= exitAt - drainAt) s.endedHow = `cut by the process exit (SIGTERM at +${exitAt - drainAt} ms; client saw: ${s.endedHow})`;
  }
  agent.destroy();
  session.destroy();
  return { version, before, after, streams };
}

function short(name: string): string {
  return name.replace('listener.0.0.0.0_8080.', 'listener ').replace('http.outbound_0.0.0.0_8080.', 'HCM ');
}

async function main(): Promise<void> {
  writeOnExit('envoy-streams', 'node dist/bench/envoy-streams.js --write');
  console.log(`Long-lived streams through a drain (plain drain_listeners, then ?graceful; --drain-time-s ${DRAIN_TIME_S}; observed ${OBSERVE_MS / 1000} s):\n`);
  for (const pinned of pinnedEnvoys()) {
    const r = await measure(pinned.version);
    console.log(`**Envoy ${r.version}**\n`);
    console.log(
      `Counted with 4 streams open: before the drain ${[...r.before].map(([k, v]) => `${short(k)} ${v}`).join(', ')}; ${OBSERVE_MS / 1000} s after it ${[...r.after].map(([k, v]) => `${short(k)} ${v}`).join(', ')}.\n`,
    );
    console.log('| stream | told to close | data after the drain | ended |');
    console.log('|---|---|---|---|');
    for (const s of r.streams) {
      console.log(`| ${s.name} | ${s.toldToClose ?? 'no'} | ${s.afterDrain} messages | ${s.endedHow} at +${s.endedAt} ms |`);
    }
    console.log('');
  }
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
