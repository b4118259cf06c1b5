/**
 * docs/long-lived.md from docs/long-lived-results.json (pure). The report script measures and
 * writes both; render-main.ts re-renders; results-docs.test.ts holds them equal.
 */
import * as fs from 'node:fs';
import { HCM_DRAIN_TIMEOUT_MS, INTERVAL_MS, KINDS, OBSERVE_MS, ROTATE, type Kind, type KindResult, type ScenarioResult } from './probe';

export interface LongLivedResults {
  readonly generated: { readonly at: string; readonly envoys: readonly string[] };
  readonly runs: readonly ScenarioResult[];
}

export function readLongLivedResults(file: string): LongLivedResults {
  const r = JSON.parse(fs.readFileSync(file, 'utf8')) as LongLivedResults;
  if (!Array.isArray(r.runs) || !r.generated) throw new Error(`${file}: not a long-lived results file (needs generated and runs)`);
  return r;
}

const CLIENT: Record<Kind, string> = {
  websocket: 'WebSocket (`ws`)',
  'grpc-server-stream': 'gRPC server stream (`@grpc/grpc-js`)',
  'grpc-bidi': 'gRPC bidirectional stream (`@grpc/grpc-js`)',
  sse: 'SSE over HTTP/1.1 (Node http + WHATWG parser)',
  'http2-multiplexed': 'HTTP/2: one SSE stream + a GET every 200 ms on one session (Node `http2`)',
  tcp: 'raw TCP through a `tcp_proxy` listener (Node `net`)',
};

const counted = (k: KindResult) =>
  Object.entries(k.counted)
    .map(([n, v]) => `${n} ${v > 0 ? '+' : ''}${v}`)
    .join(', ') || 'nothing';

const signals = (k: KindResult, before: number | null) => {
  const list = k.signals.filter((s) => before === null || s.atMs < before);
  return list.length === 0 ? 'nothing' : list.map((s) => `${s.what} at +${s.atMs} ms`).join('; ');
};

function drainTable(runs: readonly ScenarioResult[]): string[] {
  const out = [
    '| kind | Envoy | counted as (stat deltas at its open) | told to leave after the drain calls | messages in the next ' + `${OBSERVE_MS / 1000} s | open at SIGTERM | what the client saw at the end |`,
    '|---|---|---|---|---|---|---|',
  ];
  for (const kind of KINDS) {
    for (const run of runs) {
      const k = run.kinds.find((x) => x.kind === kind)!;
      out.push(
        `| ${CLIENT[kind]} | ${run.envoy} | ${counted(k)} | ${signals(k, k.openAtExitMs)} | ${k.messagesAfterT0} (gaps ${k.gaps}) | ${k.openAtExitMs === null ? 'no' : `yes (+${k.openAtExitMs} ms)`} | ${k.end ? `${k.end.how} at +${k.end.atMs} ms` : 'still open'} |`,
      );
    }
  }
  return out;
}

function rotateTable(runs: readonly ScenarioResult[]): string[] {
  const out = ['| kind | Envoy | asked to leave | messages | ended (ms after the open) |', '|---|---|---|---|---|'];
  for (const kind of KINDS) {
    for (const run of runs) {
      const k = run.kinds.find((x) => x.kind === kind)!;
      out.push(`| ${CLIENT[kind]} | ${run.envoy} | ${signals(k, null)} | ${k.messagesAfterT0} (gaps ${k.gaps}) | ${k.end ? `${k.end.how} at +${k.end.atMs} ms` : 'still open'} |`);
    }
  }
  return out;
}

export function renderLongLivedMd(results: LongLivedResults): string {
  const drain = results.runs.filter((r) => r.scenario === 'drain');
  const rotate = results.runs.filter((r) => r.scenario === 'rotate');
  const calls = drain.map((r) => `${r.envoy}: ${r.calls.map((c) => `\`POST ${c}\``).join(', then ')}`).join('; ');
  const lines = [
    '<!-- generated from docs/long-lived-results.json by test/longlived/render.ts: do not edit by hand; re-measure with `npm run build && node dist/test/longlived/report-main.js`, re-render with `node dist/test/longlived/render-main.js` -->',
    '# Long-lived connections through a drain, measured',
    '',
    'What a WebSocket, a gRPC stream, an SSE stream, an HTTP/2 connection that multiplexes and a raw',
    'TCP connection see when the hc sidecar drains a real Envoy configured as an Istio gateway',
    '(`docs/envoy.md` describes the rig), and what ends them. Each kind has its own client, a real',
    `implementation of its protocol, with one numbered message every ${INTERVAL_MS} ms (a gap in the numbers`,
    'would be a lost message). Measured on ' + results.generated.envoys.join(' and ') + ` (${results.generated.at}).`,
    'Asserted on every pinned Envoy by `test/longlived/long-lived-facts.test.ts`.',
    '',
    '## During a drain (Istio\'s defaults)',
    '',
    `No duration limit set (Istio sets none), HCM \`drain_timeout\` ${HCM_DRAIN_TIMEOUT_MS} ms, the sidecar's drain calls (${calls}),`,
    `watched ${OBSERVE_MS / 1000} s, then SIGTERM to Envoy (what pilot-agent does at the end of its drain). Times are ms after the first drain call.`,
    '',
    ...drainTable(drain),
    '',
    '## With the plan\'s limits (no drain)',
    '',
    `HCM \`common_http_protocol_options.max_connection_duration\` ${ROTATE.maxConnectionDurationMs / 1000} s and \`max_stream_duration\` ${ROTATE.maxStreamDurationMs / 1000} s,`,
    `\`tcp_proxy\` \`max_downstream_connection_duration\` ${ROTATE.tcpMaxConnectionDurationMs / 1000} s (the settings the plan derives for \`spec.traffic.longLived\`, scaled down to seconds; every delivery path emits them as the`,
    'EnvoyFilter `<gateway>-gracegate`, whose patches build exactly this configuration: test/longlived/envoy-filter.test.ts). Times are ms after the streams opened.',
    '',
    ...rotateTable(rotate),
    '',
    '## What follows (each line asserted on both versions by the fact test)',
    '',
    '- **Nothing in a drain asks a stream under way to leave**, except on an HTTP/2 connection that',
    '  carries other requests: the next response brings GOAWAY (NO_ERROR), a final one follows',
    '  `drain_timeout` later, and the long stream on it keeps flowing. A WebSocket, an SSE stream,',
    '  a gRPC stream alone on its connection and a TCP connection get nothing; `drain_timeout` does not',
    '  end them; the SIGTERM does, abnormally (WebSocket 1006, gRPC `UNAVAILABLE`, SSE aborted',
    '  mid-body, TCP FIN). A client that reconnects on those reconnects only when the pod is gone.',
    '- **Counting.** Each HTTP stream is one `downstream_rq_active` and one connection, as a request',
    '  is; only a WebSocket shows apart (`downstream_cx_upgrades_active`, which Istio\'s default stats',
    '  matcher drops). gRPC and SSE streams cannot be told from requests by Envoy\'s HCM stats. A',
    '  TCP connection counts only in its own listener\'s `downstream_cx_active` (the sidecar counts it',
    '  as a connection no HTTP connection manager holds). The counts do not move during the drain.',
    '- **What the plan can use.** `max_connection_duration` asks HTTP/2 and gRPC clients to leave',
    '  (GOAWAY; grpc-js moves the channel to IDLE and reconnects for the next call) and cannot ask an',
    '  HTTP/1.1 stream (an upgraded WebSocket or SSE) anything. `max_stream_duration` ends every HTTP',
    '  stream at its bound, gRPC clients see `INTERNAL` (RST_STREAM NO_ERROR on 1.36.4, INTERNAL_ERROR',
    '  on 1.40.0: grpc-js does not retry it by itself), HTTP/1.1 clients see the close about 1 s after',
    '  the bound. `tcp_proxy` `max_downstream_connection_duration` closes a TCP connection with a FIN at',
    '  its bound. No message was lost in any run: the numbered messages had no gap up to the end.',
    '',
  ];
  return `${lines.join('\n')}\n`;
}
