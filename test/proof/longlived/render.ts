/**
 * docs/long-lived.md from docs/long-lived-results.json (pure). The report script measures and
 * writes both; render-main.ts re-renders; results-docs.test.ts holds them equal.
 */
import { forDocsDir, PROOF_DOC } from '../../support/docs-links';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/repo';
import type { E2eRun } from './e2e-table';
import { HCM_DRAIN_TIMEOUT_MS, INTERVAL_MS, KINDS, OBSERVE_MS, ROTATE, type Kind, type KindResult, type ScenarioResult } from './probe';

export interface LongLivedResults {
  readonly generated: { readonly at: string; readonly envoys: readonly string[] };
  readonly runs: readonly ScenarioResult[];
  /** One pod leaving under load with reconnecting clients (e2e-table.ts); absent in files measured before it. */
  readonly e2e?: readonly E2eRun[];
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
    '| kind | Envoy | counted as (stat deltas at its open) | told to leave after the drain calls | messages in the next ' +
      `${OBSERVE_MS / 1000} s | open at SIGTERM | what the client saw at the end |`,
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
      out.push(
        `| ${CLIENT[kind]} | ${run.envoy} | ${signals(k, null)} | ${k.messagesAfterT0} (gaps ${k.gaps}) | ${k.end ? `${k.end.how} at +${k.end.atMs} ms` : 'still open'} |`,
      );
    }
  }
  return out;
}

function e2eSection(results: LongLivedResults): string[] {
  const e2e = results.e2e ?? [];
  if (e2e.length === 0) return [];
  const plan = e2e.find((r) => r.sequence === 'gracegate-plan');
  const unplanned = e2e.find((r) => r.sequence === 'gracegate');
  const k = e2e[0]!.kinds;
  return [
    '## End to end: one pod leaves under load',
    '',
    `S5's steady load (test/proof/harness) and ${k.map((x) => `${x.clients} ${E2E_KIND[x.kind] ?? x.kind}`).join(', ')} clients that reconnect`,
    '(`test/proof/harness/long-lived.ts`: one numbered message every 100 ms, from the app, or for gRPC and TCP from the client and echoed;',
    'a client resumes from its last number + 1), to two pods of real Envoy with the real hc sidecar, through',
    `real ${e2e[0]!.lb} (gRPC and TCP straight to the pods: the next one whose LB endpoint answers 200); one pod leaves. With the plan the spec has`,
    `\`spec.traffic.longLived\` with a ${plan?.boundSeconds ?? '?'} s bound (lab time: the schema's floor is 10 s, the lab compresses time as it does the drain timeout),`,
    `so the pods' Envoys run \`max_stream_duration\` ${plan?.boundSeconds ?? '?'} s and the drain timeout is ${plan?.drainTimeoutSeconds ?? '?'} s; without it, ${unplanned?.drainTimeoutSeconds ?? '?'} s.`,
    'A stream ended by rotation is one whose messages stopped at the bound and whose client saw the close within 1.8 s of it',
    "(Envoy closes an HTTP/1.1 connection about 1 s after it ends the stream; a gRPC stream is reset, a TCP connection closed, at once); a cut is a close at Envoy's exit or at the LB's DOWN",
    "with messages flowing until then. Times are after the pod's deletion. Asserted in `npm test` by `test/proof/e2e/long-lived.test.ts` (on the Istio release's Envoy).",
    '',
    ...e2eRunTable(e2e, DOC_WORDS),
    '',
    ...rollingTable(e2e),
    ...e2eFindings(e2e, DOC_WORDS),
    '',
    `## Per kind: ${DOC_WORDS.baseline}, gracegate, gracegate with the plan`,
    '',
    'WebSocket, SSE, gRPC bidirectional streams and raw TCP from the end-to-end runs above; the gRPC and TCP clients go straight to',
    "the pods, each picking the next pod whose LB endpoint answers 200 (as an L4 LB does): the harness's HAProxy runs `gracegate lb-config`'s",
    'backend untouched, which speaks HTTP/1.1 to the pods (gRPC needs `proto h2` on its server lines, raw TCP mode tcp). A gRPC server',
    `stream against Envoy alone (the tables above; its test app cannot resume): there the ${DOC_WORDS.baseline} and gracegate without \`longLived\` are`,
    'alike for the stream (nothing asks it to leave, the exit cuts it), and the stream is counted in flight for as long as it lives.',
    '',
    ...perKindTable(results, DOC_WORDS),
    '',
  ];
}

export function renderLongLivedMd(results: LongLivedResults): string {
  const drain = results.runs.filter((r) => r.scenario === 'drain');
  const rotate = results.runs.filter((r) => r.scenario === 'rotate');
  const calls = drain.map((r) => `${r.envoy}: ${r.calls.map((c) => `\`POST ${c}\``).join(', then ')}`).join('; ');
  const lines = [
    '<!-- generated from docs/long-lived-results.json by test/proof/longlived/render.ts: do not edit by hand; re-measure with `npm run build && node dist/test/proof/longlived/report-main.js`, re-render with `node dist/test/proof/longlived/render-main.js` -->',
    '# Long-lived connections through a drain, measured',
    '',
    'What a WebSocket, a gRPC stream, an SSE stream, an HTTP/2 connection that multiplexes and a raw',
    'TCP connection see when the hc sidecar drains a real Envoy configured as an Istio gateway',
    '(`docs/envoy.md` describes the rig), and what ends them. Each kind has its own client, a real',
    `implementation of its protocol, with one numbered message every ${INTERVAL_MS} ms (a gap in the numbers`,
    'would be a lost message). Measured on ' + results.generated.envoys.join(' and ') + ` (${results.generated.at}).`,
    'Asserted on every pinned Envoy by `test/proof/longlived/long-lived-facts.test.ts`.',
    '',
    "## During a drain (Istio's defaults)",
    '',
    `No duration limit set (Istio sets none), HCM \`drain_timeout\` ${HCM_DRAIN_TIMEOUT_MS} ms, the sidecar's drain calls (${calls}),`,
    `watched ${OBSERVE_MS / 1000} s, then SIGTERM to Envoy (what pilot-agent does at the end of its drain). Times are ms after the first drain call.`,
    '',
    ...drainTable(drain),
    '',
    "## With the plan's limits (no drain)",
    '',
    `HCM \`common_http_protocol_options.max_connection_duration\` ${ROTATE.maxConnectionDurationMs / 1000} s and \`max_stream_duration\` ${ROTATE.maxStreamDurationMs / 1000} s,`,
    `\`tcp_proxy\` \`max_downstream_connection_duration\` ${ROTATE.tcpMaxConnectionDurationMs / 1000} s (the settings the plan derives for \`spec.traffic.longLived\`, scaled down to seconds; every delivery path emits them as the`,
    'EnvoyFilter `<gateway>-gracegate`, whose patches build exactly this configuration: test/proof/longlived/envoy-filter.test.ts). Times are ms after the streams opened.',
    '',
    ...rotateTable(rotate),
    '',
    ...e2eSection(results),
    '## What follows (each line asserted on both versions by the fact test)',
    '',
    '- **Nothing in a drain asks a stream under way to leave**, except on an HTTP/2 connection that',
    '  carries other requests: the next response brings GOAWAY (NO_ERROR), a final one follows',
    '  `drain_timeout` later, and the long stream on it keeps flowing. A WebSocket, an SSE stream,',
    '  a gRPC stream alone on its connection and a TCP connection get nothing; `drain_timeout` does not',
    '  end them; the SIGTERM does, abnormally (WebSocket 1006, gRPC `UNAVAILABLE`, SSE aborted',
    '  mid-body, TCP FIN). A client that reconnects on those reconnects only when the pod is gone.',
    '- **Counting.** Each HTTP stream is one `downstream_rq_active` and one connection, as a request',
    "  is; only a WebSocket shows apart (`downstream_cx_upgrades_active`, which Istio's default stats",
    "  matcher drops). gRPC and SSE streams cannot be told from requests by Envoy's HCM stats. A",
    "  TCP connection counts only in its own listener's `downstream_cx_active` (the sidecar counts it",
    '  as a connection no HTTP connection manager holds). The counts do not move during the drain.',
    '- **What the plan can use.** `max_connection_duration` asks HTTP/2 and gRPC clients to leave',
    '  (GOAWAY; grpc-js moves the channel to IDLE and reconnects for the next call) and cannot ask an',
    '  HTTP/1.1 stream (an upgraded WebSocket or SSE) anything. `max_stream_duration` ends every HTTP',
    '  stream at its bound, gRPC clients see `INTERNAL` (RST_STREAM NO_ERROR on 1.36.4, INTERNAL_ERROR',
    '  on 1.40.0: grpc-js does not retry it by itself). A NO_ERROR reset can reach a bidirectional',
    "  call that is still sending as nothing at all: Node's http2 ends such a stream only once the",
    '  call has finished sending, so grpc-js reports no status and the call waits for its deadline',
    '  (seen in some runs on 1.36.4; the test reads the reset on the wire in front of the client).',
    '  HTTP/1.1 clients see the close about 1 s after the bound. `tcp_proxy`',
    '  `max_downstream_connection_duration` closes a TCP connection with a FIN at its bound. No message',
    '  was lost in any run: the numbered messages had no gap up to the end.',
    '',
    '## What the plan says (`spec.traffic.longLived`)',
    '',
    '`gracegate plan` shows a long-lived section (the limits with their formulas, the stream wait, how',
    'each kind ends) and these findings, each with its fix (src/plan/long-lived.ts):',
    '',
    '- `long-lived-clients-do-not-reconnect` (error): nothing ends a stream without its client seeing',
    '  it, so clients that do not reconnect fail at every termination.',
    '- `long-lived-unbounded` (warning): no lifetime bound; a stream holds the drain to its timeout and',
    '  is then cut. The fix sets the largest bound the grace period can wait for.',
    '- `long-lived-lifetime-exceeds-grace` / `long-lived-drain-timeout-below-lifetime` (warning): the',
    '  drain cannot wait for the rotation; streams under way are cut at the end of the sequence.',
    '- `long-lived-bound-cuts-requests` (warning): `max_stream_duration` applies to ordinary requests',
    '  too, and the bound is below the longest one (ceil(1.2 x p99)).',
    '- `long-lived-reconnect-refused-until-down` (warning): drain-first refuses reconnects until DOWN',
    "  behind an LB that does not re-send refused connects, longer than the client's tolerance.",
    '- `long-lived-grpc-rotation-is-internal` (info): the rotation ends a gRPC stream with status',
    '  INTERNAL, which gRPC clients do not retry by default.',
    '',
    'The sidecar reports the WebSockets and TCP connections it counts apart from requests',
    '(`GET /state` `envoy.proxy.lastCount`, the gauge `gracegate_hc_long_lived_connections`), and a drain',
    'they hold to its timeout names them in its warning (docs/hc.md).',
    '',
  ];
  return `${lines.join('\n')}\n`;
}

/** The README's generated long-lived section lies between these markers. */
export const README_LONG_LIVED_MARKERS = ['<!-- generated from docs/long-lived-results.json: long-lived -->', '<!-- end long-lived -->'] as const;

const E2E_KIND: Record<string, string> = {
  websocket: 'WebSocket (`ws`)',
  sse: 'SSE over HTTP/1.1 (Node http + WHATWG parser)',
  'grpc-bidi': 'gRPC bidirectional stream (`@grpc/grpc-js`)',
  tcp: 'raw TCP through a `tcp_proxy` listener (Node `net`)',
};

/** How the end-to-end runs reach the pods, per kind. */
const E2E_PATH: Record<string, string> = {
  websocket: 'end to end: HAProxy, the hc sidecar, one pod leaves under load',
  sse: 'end to end: HAProxy, the hc sidecar, one pod leaves under load',
  'grpc-bidi': 'end to end, straight to the pods (picked as an L4 LB does, by their LB endpoint), the hc sidecar',
  tcp: 'end to end, straight to the pods (picked as an L4 LB does, by their LB endpoint), the hc sidecar',
};

/**
 * What the baseline order is called: the README's proof table calls it the article order;
 * docs/long-lived.md ships in the package, whose docs name no seed (test/cli/citations.test.ts).
 */
export type Words = { readonly baseline: string };
export const README_WORDS: Words = { baseline: 'article order' };
export const DOC_WORDS: Words = { baseline: 'keep-accepting order' };

const SEQUENCE_TEXT = (w: Words): Record<E2eRun['sequence'], string> => ({
  seed: `${w.baseline} (keep accepting, poll in-flight up to the drain timeout, then 503)`,
  gracegate: 'gracegate without `longLived` (the behaviour before the plan)',
  'gracegate-plan': 'gracegate with the long-lived plan',
  'gracegate-plan-flush': 'gracegate with the long-lived plan, behind `on-marked-down shutdown-sessions`',
  'gracegate-plan-rolling': 'rolling replacement with the long-lived plan',
});

const CAUSE_TEXT: Record<string, string> = {
  rotation: 'rotation at the bound',
  'envoy-exit': "cut at Envoy's exit",
  'lb-down': "cut by the LB's flush at DOWN",
  other: 'ended before the bound, Envoy running',
};

const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

function causes(endedBy: Partial<Record<string, number>>): string {
  const list = Object.entries(endedBy).map(([c, n]) => `${n} ${CAUSE_TEXT[c] ?? c}`);
  return list.length === 0 ? 'none ended' : list.join(', ');
}

function drainText(r: E2eRun): string {
  if (r.drain.startMs === null || r.drain.endMs === null) return 'not seen';
  const ms = r.drain.endMs - r.drain.startMs;
  return r.drain.timedOut ? `held to its ${r.drainTimeoutSeconds} s timeout (${sec(ms)})` : `in-flight 0 after ${sec(ms)} (timeout ${r.drainTimeoutSeconds} s)`;
}

/** A rolling replacement's terminations, one line each. */
function rollingTable(e2e: readonly E2eRun[]): string[] {
  const rolling = e2e.filter((r) => r.sequence === 'gracegate-plan-rolling' && r.terminations);
  if (rolling.length === 0) return [];
  const out = ['| Envoy | pod | streams on it at its termination | how they ended | reconnects the termination caused | drain |', '|---|---|---|---|---|---|'];
  for (const r of rolling) {
    for (const t of r.terminations) {
      const drain =
        t.drainMs === null
          ? 'not seen'
          : t.drainTimedOut
            ? `held to its ${r.drainTimeoutSeconds} s timeout`
            : `in-flight 0 after ${sec(t.drainMs)} (timeout ${r.drainTimeoutSeconds} s)`;
      out.push(`| ${r.envoy} | ${t.pod} | ${t.openAtStart} | ${causes(t.endedBy)} | ${t.reconnects} | ${drain} |`);
    }
  }
  const lost = rolling.reduce((n, r) => n + r.kinds.reduce((m, k) => m + k.lost, 0), 0);
  return [
    `Rolling replacement of both pods (maxUnavailable 1, maxSurge 0) with the plan, same clients: every termination, ${lost} messages lost in all.`,
    '',
    ...out,
    '',
  ];
}

function e2eRunTable(e2e: readonly E2eRun[], w: Words): string[] {
  const out = [
    '| termination | Envoy | LB | kind | streams on the leaving pod at its start | messages lost (repeated) | reconnects the termination caused | how they ended (what the client saw) | longest a message came late | drain of the leaving pod |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of e2e.filter((x) => x.sequence !== 'gracegate-plan-rolling')) {
    for (const k of r.kinds) {
      out.push(
        `| ${SEQUENCE_TEXT(w)[r.sequence]}${r.sequence === 'seed' ? '' : `, ${r.order.replace(/^gracegate /, '')}`} | ${r.envoy} | ${r.lbSetting} | ${E2E_KIND[k.kind] ?? k.kind} | ${k.openAtStart} | ${k.lost} (${k.duplicates}) | ${k.reconnects} | ${causes(k.endedBy)} (${k.seen.join(', ') || '-'}) | ${k.maxLateMs} ms | ${drainText(r)} |`,
      );
    }
  }
  return out;
}

const PER_KIND_SEQUENCES = ['seed', 'gracegate', 'gracegate-plan'] as const;

/** One cell of the per-kind table for a kind the end-to-end runs carry. */
function e2eCell(runs: readonly E2eRun[], kind: string): string {
  return runs
    .map((r) => {
      const k = r.kinds.find((x) => x.kind === kind);
      if (!k) return `${r.envoy}: not measured`;
      return `${r.envoy}: lost ${k.lost}, ${k.reconnects} reconnect${k.reconnects === 1 ? '' : 's'}, ${causes(k.endedBy)}; drain ${drainText(r)}`;
    })
    .join('<br>');
}

/** A cell for a kind measured against Envoy alone (probe.ts): the drain scenario for the orders without limits, rotate with the plan. */
function probeCell(runs: readonly ScenarioResult[], kind: Kind, scenario: 'drain' | 'rotate'): string {
  return runs
    .filter((r) => r.scenario === scenario)
    .map((r) => {
      const k = r.kinds.find((x) => x.kind === kind)!;
      const end = k.end ? `${k.end.how}` : 'still open';
      if (scenario === 'drain') {
        const inFlight = Object.entries(k.counted).find(([n]) => n === 'HCM rq_active' || n === 'tcp listener cx_active');
        return `${r.envoy}: lost ${k.gaps}, not told to leave, counted in flight (${inFlight ? `${inFlight[0]} +${inFlight[1]}` : 'not counted'}) until the exit cuts it: ${end}`;
      }
      const asked = k.signals.length === 0 ? 'not asked first' : `${k.signals[0]!.what} at +${k.signals[0]!.atMs} ms`;
      return `${r.envoy}: lost ${k.gaps}, ${asked}; ended at the bound: ${end} at +${k.end?.atMs ?? '?'} ms`;
    })
    .join('<br>');
}

const PROBE_KINDS: readonly Kind[] = ['grpc-server-stream'];

/** The per-kind table: each kind x {article order, gracegate without longLived, with the plan}. */
export function perKindTable(results: LongLivedResults, w: Words): string[] {
  const e2e = results.e2e ?? [];
  const out = [`| kind | measured | ${w.baseline} | gracegate without \`longLived\` | gracegate with the long-lived plan |`, '|---|---|---|---|---|'];
  for (const kind of Object.keys(E2E_KIND).filter((k) => e2e.some((r) => r.kinds.some((x) => x.kind === k)))) {
    const cells = PER_KIND_SEQUENCES.map((seq) =>
      e2eCell(
        e2e.filter((r) => r.sequence === seq),
        kind,
      ),
    );
    out.push(`| ${E2E_KIND[kind]} | ${E2E_PATH[kind]} | ${cells.join(' | ')} |`);
  }
  for (const kind of PROBE_KINDS) {
    const drain = probeCell(results.runs, kind, 'drain');
    out.push(`| ${CLIENT[kind]} | Envoy alone (no LB, no sidecar) | ${drain} | ${drain} | ${probeCell(results.runs, kind, 'rotate')} |`);
  }
  return out;
}

/** What the end-to-end runs show, in words computed from them (so prose and tables cannot disagree). */
export function e2eFindings(e2e: readonly E2eRun[], w: Words): string[] {
  if (e2e.length === 0) return [];
  const of = (seq: E2eRun['sequence']) => e2e.filter((r) => r.sequence === seq);
  const sum = (runs: readonly E2eRun[], f: (k: E2eRun['kinds'][number]) => number) => runs.reduce((n, r) => n + r.kinds.reduce((m, k) => m + f(k), 0), 0);
  const drains = (runs: readonly E2eRun[]) =>
    runs.filter((r) => r.drain.startMs !== null && r.drain.endMs !== null).map((r) => r.drain.endMs! - r.drain.startMs!);
  const range = (xs: number[]) =>
    xs.length === 0 ? '-' : sec(Math.min(...xs)) === sec(Math.max(...xs)) ? sec(xs[0]!) : `${sec(Math.min(...xs))}-${sec(Math.max(...xs))}`;
  const count = (runs: readonly E2eRun[], cause: string) => sum(runs, (k) => k.endedBy[cause as 'rotation'] ?? 0);
  const plan = of('gracegate-plan');
  const unplanned = of('gracegate');
  const seed = of('seed');
  const flush = of('gracegate-plan-flush');
  const envoys = [...new Set(e2e.map((r) => r.envoy))].join(' and ');
  const lines = [
    `- **With the plan** (${envoys}): ${count(plan, 'rotation')} of ${sum(plan, (k) => k.reconnects)} streams on the leaving pods ended by rotation at the bound, ${count(plan, 'envoy-exit')} at Envoy's exit; clients lost ${sum(plan, (k) => k.lost)} messages; the drains reached in-flight 0 after ${range(drains(plan))}${plan.some((r) => r.drain.timedOut) ? ' (some timed out)' : ', none at its timeout'}. A rotation costs a WebSocket or SSE client up to ${Math.max(0, ...plan.flatMap((r) => r.kinds.filter((k) => k.kind === 'websocket' || k.kind === 'sse').map((k) => k.maxLateMs)))} ms without messages: Envoy stops the stream at the bound and closes the HTTP/1.1 connection about 1 s later, and the client reconnects only then (\`reconnectToleranceSeconds\` must allow it); gRPC and TCP clients see the end at once (up to ${Math.max(0, ...plan.flatMap((r) => r.kinds.filter((k) => k.kind === 'grpc-bidi' || k.kind === 'tcp').map((k) => k.maxLateMs)))} ms late).`,
    `- **gracegate without \`longLived\`**: ${count(unplanned, 'envoy-exit')} of ${sum(unplanned, (k) => k.reconnects)} streams on the leaving pods were cut at Envoy's exit; the drains ${unplanned.every((r) => r.drain.timedOut) ? 'were all held to their timeout' : 'were not all held to their timeout'} (${range(drains(unplanned))}); clients that resume lost ${sum(unplanned, (k) => k.lost)} messages all the same: what the plan changes is who ends a stream, and that the drain is not held.`,
    `- **${w.baseline[0]!.toUpperCase()}${w.baseline.slice(1)}**: ${count(seed, 'envoy-exit')} of ${sum(seed, (k) => k.reconnects)} streams on the leaving pods were cut at Envoy's exit; its poll ${seed.every((r) => r.drain.timedOut) ? 'never saw 0 and ran to the timeout' : 'saw 0 in some runs'} (${range(drains(seed))}); lost ${sum(seed, (k) => k.lost)}.`,
  ];
  if (flush.length > 0) {
    const early = flush.flatMap((r) =>
      r.kinds.flatMap((k) => k.streams.filter((x) => x.cause === 'other').map((x) => ({ kind: k.kind, age: x.closeMs - x.openMs }))),
    );
    const earlyKinds = [...new Set(early.map((x) => E2E_KIND[x.kind] ?? x.kind))].join(', ');
    lines.push(
      `- **Behind lb-config's drain-first backend** (\`on-marked-down shutdown-sessions\`, \`option http-server-close\`; with the plan): of ${sum(flush, (k) => k.reconnects)} streams on the leaving pods ${count(flush, 'rotation')} ended by rotation, ${count(flush, 'lb-down')} were cut by HAProxy at DOWN, ${count(flush, 'envoy-exit')} at Envoy's exit${early.length > 0 ? `, and ${early.length} (${earlyKinds}) ended before the bound with Envoy running, at an age of ${range(early.map((x) => x.age))}, after \`max_connection_duration\` and before \`max_stream_duration\` (not yet explained, not asserted)` : ''}; lost ${sum(flush, (k) => k.lost)}; the drains reached in-flight 0 after ${range(drains(flush))}.`,
    );
  }
  return lines;
}

export function renderReadmeLongLived(results: LongLivedResults): string {
  const e2e = results.e2e ?? [];
  const plan = e2e.find((r) => r.sequence === 'gracegate-plan');
  const lines = [
    'A WebSocket, a gRPC stream, an SSE stream or a TCP connection never reaches in-flight 0 by itself: without',
    '`spec.traffic.longLived` it holds every drain to its timeout and is cut when Envoy exits. With',
    '`spec.traffic.longLived` (`kinds`, `clientsReconnect: true`, `maxStreamLifetimeSeconds`) the plan has Envoy',
    'rotate streams at that age (HCM `max_stream_duration`, `max_connection_duration` a GOAWAY earlier, the',
    "tcp_proxy's `max_downstream_connection_duration`: synth, post-render, Kustomize and the constructs emit them as the",
    'EnvoyFilter `<gateway>-gracegate`, which the end-to-end pods get) and the drain timeout cover the rotation, so a drain',
    'ends when the streams under way have rotated. The sidecar reports the WebSockets and TCP connections it counts apart',
    '(`GET /state` `envoy.proxy.lastCount`, `gracegate_hc_long_lived_connections`), and a drain they hold to its timeout says so.',
    'Each kind x termination, measured on',
    `real Envoy ${results.generated.envoys.join(' and ')} (${results.generated.at}${plan ? `; end to end with a ${plan.boundSeconds} s bound in lab time` : ''}): clients that reconnect resume from their last message number.`,
    '',
    ...perKindTable(results, README_WORDS),
    '',
    'End to end: reconnecting clients, WebSocket and SSE through real HAProxy, gRPC and TCP straight to the pods (the next pod whose',
    "LB endpoint answers 200, as an L4 LB picks: the harness's HAProxy runs lb-config's HTTP/1.1 backend untouched; gRPC needs",
    "`proto h2` on the server lines, raw TCP mode tcp), two pods with the real hc sidecar, one leaves under S5's steady load. A gRPC",
    'server stream against Envoy alone (`test/proof/longlived/probe.ts`): there the article order and gracegate without `longLived` look alike from',
    'the stream (nothing asks it to leave, the exit cuts it).',
    '',
    ...e2eFindings(e2e, README_WORDS),
    '',
    'Per run, per Envoy, and what each kind sees in a drain: [docs/long-lived.md](docs/long-lived.md).',
  ];
  return lines.join('\n');
}

/** Replaces docs/proof.md's long-lived section (between its markers), its links relative to docs/. */
export function replaceReadmeLongLived(readme: string, results: LongLivedResults): string {
  const [begin, end] = README_LONG_LIVED_MARKERS;
  const i = readme.indexOf(begin);
  const j = readme.indexOf(end);
  if (i < 0 || j < i) throw new Error(`docs/proof.md has no ${begin} ... ${end}`);
  return `${readme.slice(0, i + begin.length)}\n${forDocsDir(renderReadmeLongLived(results))}\n${readme.slice(j)}`;
}

/** Writes docs/long-lived.md and docs/proof.md's section from the results. */
export function writeLongLivedDocs(results: LongLivedResults): void {
  fs.writeFileSync(join(REPO_ROOT, 'docs', 'long-lived.md'), renderLongLivedMd(results));
  const readme = PROOF_DOC;
  fs.writeFileSync(readme, replaceReadmeLongLived(fs.readFileSync(readme, 'utf8'), results));
}
