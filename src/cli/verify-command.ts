/**
 * `gracegate verify`: the end-to-end scenarios against the user's own staging gateway. A bounded
 * load through their LB, their termination command at a set time, every failed request classified
 * on the termination's clock, and the verdict against the plan. docs/verify.md.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GracegateError } from '../core/errors';
import { makeDirs } from '../core/make-dirs';
import { planGateway, type Plan } from '../plan/plan-gateway';
import { chosenOrder } from '../plan/order-choice';
import { podChanges } from '../pod/pod-changes';
import { labelSelector } from '../verify/pod-state';
import { listPods, PodStatePoller, POD_STATE_INTERVAL_MS, SEQUENCE_INTERVAL_MS } from '../verify/pod-state-kubectl';
import { VERIFY_SCENARIOS, type VerifyScenario } from '../verify/mixes';
import { renderVerifyText, verifyReport, type PodStateCapture, type VerifyReport } from '../verify/report';
import { runVerify, type VerifyOptions } from '../verify/run-verify';
import { summarize, type Prediction } from '../verify/summary';
import { renderVerifySvg } from '../verify/timeline-svg';
import { boundedFlag, durationFlag, integerFlag, runParsedCommand, UsageError } from './args';
import { loadSpecFile } from './load-spec-file';
import { HC_CONTAINER_NAME } from '../pod/names';

/**
 * The load's bounds: a verify run must never be the outage. Defaults a staging gateway does not
 * notice (20 requests/s on 4 connections for a minute); the caps hold whatever is asked.
 */
export const VERIFY_LIMITS = {
  rps: { default: 20, max: 1000 },
  connections: { default: 4, max: 64 },
  durationSeconds: { default: 60, max: 1800 },
  terminateAtSeconds: { default: 10 },
  tailSeconds: { default: 5 },
  timeoutSeconds: { default: 30, max: 300 },
  longSeconds: { default: 10, max: 600 },
  headers: { max: 20 },
} as const;

const L = VERIFY_LIMITS;

const USAGE = `usage: gracegate verify --url URL --terminate CMD [--observe CMD] [--duration DUR] [--rps N]
                       [--scenario s1|s3|s4|s5|rolling] [--spec gateway.yaml [--pod-state [--kubectl PATH]]]
                       [--format text|json] [--report DIR]

Drives a bounded load at URL (your gateway through your LB, in staging), runs CMD at --terminate-at
(e.g. kubectl -n istio-ingress delete pod -l app=igw --wait=false), keeps the load going until the
termination is over, and classifies every failed request: refused, reset, http-NNN, truncated,
timeout, each with its time relative to the termination. docs/verify.md.

  --url URL            the only address contacted (http or https); must answer 200 before the run
  --terminate CMD      shell command that starts the termination (run once, at --terminate-at)
  --observe CMD        shell command that exits 0 when the termination is over (e.g. kubectl wait
                       --for=delete pod/NAME --timeout=5m); the load stops --tail after it. Without
                       it the load runs the whole --duration
  --duration DUR       longest load (default ${L.durationSeconds.default}s, at most ${L.durationSeconds.max / 60}m)
  --terminate-at DUR   when CMD runs, after the load started (default ${L.terminateAtSeconds.default}s; before --duration)
  --tail DUR           load kept after --observe exits (default ${L.tailSeconds.default}s)
  --rps N              requests started per second, all connections together (default ${L.rps.default}, at most ${L.rps.max})
  --connections N      keep-alive connections (default ${L.connections.default}, at most ${L.connections.max})
  --timeout DUR        a request not done after this is a timeout (default ${L.timeoutSeconds.default}s, at most ${L.timeoutSeconds.max / 60}m)
  --scenario NAME      s5 (default) / s3 / rolling: mixed lengths 50 ms - 2 s and streams;
                       s1: light load + one long request (--long) in flight at the termination;
                       s4: light load + one stream of --long
  --long DUR           s1's request, s4's stream (default ${L.longSeconds.default}s)
  --slow-path TMPL     path answering after {ms} ms, e.g. /delay?ms={ms}: gives the mix its lengths
  --stream-path TMPL   path streaming {chunks} lines {intervalMs} apart
                       (without the templates every request GETs --url as given)
  --header 'K: V'      sent with every request, e.g. a Host header (repeatable)
  --insecure           https: accept a certificate that does not verify
  --spec FILE          the gateway's GracefulGateway spec: the verdict is against its plan's predicted loss
  --pod-state          with --spec: list the gateway's pods (kubectl get pods, the spec's namespace and
                       pod labels) and read each one's /state every ${POD_STATE_INTERVAL_MS / 1000} s during the run (${SEQUENCE_INTERVAL_MS / 1000} s while
                       its sequence runs, back to back while it closes) with kubectl exec POD -c ${HC_CONTAINER_NAME} -- gracegate state,
                       to put the six events on the timeline
  --kubectl PATH       the kubectl --pod-state runs (default kubectl, its current context)
  --format FORMAT      text (default) or json ({requests, failures, failuresByKind, failed, verdict, ...})
  --report DIR         also write DIR/verify.json and DIR/timeline.svg
Ctrl-C ends the run early with the partial report.
Exit 1: a loss the plan does not predict (any loss without --spec); 2 also for a command that failed.
`;

function secondsFlag(name: string, value: string, max?: number): number {
  const s = durationFlag(name, value);
  if (s <= 0) throw new UsageError(`--${name} must be more than 0, got '${value}'`);
  if (max !== undefined && s > max) throw new UsageError(`--${name} must be at most ${max} s, got '${value}'`);
  return s;
}

function urlFlag(value: string | undefined): URL {
  if (value === undefined)
    throw new UsageError('--url is required: the address of your gateway through your LB, e.g. --url https://staging.example.com/healthz');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--url must be an absolute http(s) URL, got '${value}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--url must be http or https, got '${url.protocol}'`);
  if (url.username !== '' || url.password !== '') throw new UsageError('--url must not carry credentials (use --header for an Authorization header)');
  return url;
}

function pathTemplate(name: string, value: string | undefined, placeholders: string[]): string | undefined {
  if (value === undefined) return undefined;
  if (!value.startsWith('/')) throw new UsageError(`--${name} must be a path on the URL's host starting with '/', got '${value}'`);
  const missing = placeholders.filter((p) => !value.includes(`{${p}}`));
  if (missing.length > 0) throw new UsageError(`--${name} must contain ${missing.map((p) => `{${p}}`).join(' and ')}, got '${value}'`);
  return value;
}

function headersFlag(values: string[]): Record<string, string> {
  if (values.length > L.headers.max) throw new UsageError(`--header given ${values.length} times, at most ${L.headers.max}`);
  const out: Record<string, string> = {};
  for (const h of values) {
    const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):\s*(.*)$/.exec(h);
    if (!m) throw new UsageError(`--header must be 'Name: value', got '${h}'`);
    out[m[1]!] = m[2]!;
  }
  return out;
}

function commandFlag(name: string, value: string | undefined, required: boolean): string | undefined {
  if (value === undefined) {
    if (required)
      throw new UsageError(
        `--${name} is required: the shell command that terminates a gateway pod, e.g. --${name} 'kubectl -n istio-ingress delete pod -l app=igw --wait=false'`,
      );
    return undefined;
  }
  if (value.trim() === '') throw new UsageError(`--${name} is empty`);
  return value;
}

/** The plan's predicted loss, from --spec. */
function predictionOf(plan: Plan | null): Prediction {
  if (plan === null) return null;
  const chosen = chosenOrder(plan);
  return {
    findings: plan.findings.filter((f) => f.expectedLoss !== undefined && f.expectedLoss !== 'none').map((f) => ({ id: f.id, expectedLoss: f.expectedLoss! })),
    expected: { order: plan.sequence, lostPerTermination: chosen.expected, requestsPerSecondPerPod: plan.traffic.requestsPerSecondPerPod },
  };
}

/** --pod-state and --kubectl: the kubectl to run, or null without --pod-state. */
export function podStateFlag(podState: boolean, spec: string | undefined, kubectl: string | undefined): string | null {
  if (!podState) {
    if (kubectl !== undefined) throw new UsageError('--kubectl is used only with --pod-state');
    return null;
  }
  if (spec === undefined) throw new UsageError("--pod-state needs --spec: the gateway's namespace and pod labels come from the spec");
  if (kubectl !== undefined && kubectl.trim() === '') throw new UsageError('--kubectl is empty');
  return kubectl ?? 'kubectl';
}

/** Writes each file beside its final name first, then renames: a failed run leaves no half-written report. */
function writeReport(dir: string, files: Record<string, string>): void {
  try {
    makeDirs(dir);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, `.${name}.tmp`), text);
    for (const name of Object.keys(files)) renameSync(join(dir, `.${name}.tmp`), join(dir, name));
  } catch (err) {
    throw new GracegateError(`--report ${dir}: ${(err as Error).message}`);
  }
}

export async function run(args: string[]): Promise<number> {
  return runParsedCommand(
    USAGE,
    args,
    {
      url: { type: 'string' },
      terminate: { type: 'string' },
      observe: { type: 'string' },
      duration: { type: 'string', default: `${L.durationSeconds.default}s` },
      'terminate-at': { type: 'string', default: `${L.terminateAtSeconds.default}s` },
      tail: { type: 'string', default: `${L.tailSeconds.default}s` },
      rps: { type: 'string', default: String(L.rps.default) },
      connections: { type: 'string', default: String(L.connections.default) },
      timeout: { type: 'string', default: `${L.timeoutSeconds.default}s` },
      scenario: { type: 'string', default: 's5' },
      long: { type: 'string', default: `${L.longSeconds.default}s` },
      'slow-path': { type: 'string' },
      'stream-path': { type: 'string' },
      header: { type: 'string', multiple: true },
      insecure: { type: 'boolean' },
      spec: { type: 'string' },
      'pod-state': { type: 'boolean' },
      kubectl: { type: 'string' },
      format: { type: 'string', default: 'text' },
      report: { type: 'string' },
    },
    false,
    async ({ values }) => {
      const format = values.format as string;
      if (format !== 'text' && format !== 'json') throw new UsageError(`--format must be text or json, got '${format}'`);
      const url = urlFlag(values.url as string | undefined);
      const terminate = commandFlag('terminate', values.terminate as string | undefined, true)!;
      const observe = commandFlag('observe', values.observe as string | undefined, false);
      const durationS = secondsFlag('duration', values.duration as string, L.durationSeconds.max);
      const terminateAtS = durationFlag('terminate-at', values['terminate-at'] as string);
      if (terminateAtS >= durationS) throw new UsageError(`--terminate-at (${terminateAtS} s) must come before the end of --duration (${durationS} s)`);
      const tailS = durationFlag('tail', values.tail as string);
      const rps = boundedFlag('rps', integerFlag('rps', values.rps as string), 1, L.rps.max);
      const connections = boundedFlag('connections', integerFlag('connections', values.connections as string), 1, L.connections.max);
      const timeoutS = secondsFlag('timeout', values.timeout as string, L.timeoutSeconds.max);
      const longS = secondsFlag('long', values.long as string, L.longSeconds.max);
      const scenario = values.scenario as string;
      if (!(VERIFY_SCENARIOS as readonly string[]).includes(scenario))
        throw new UsageError(`--scenario must be one of ${VERIFY_SCENARIOS.join(', ')}, got '${scenario}'`);
      const slowPath = pathTemplate('slow-path', values['slow-path'] as string | undefined, ['ms']);
      const streamPath = pathTemplate('stream-path', values['stream-path'] as string | undefined, ['chunks', 'intervalMs']);
      if (scenario === 's1' && slowPath === undefined)
        throw new UsageError('--scenario s1 needs --slow-path: its long request must take --long, which only a path that waits {ms} can');
      if (scenario === 's4' && streamPath === undefined) throw new UsageError('--scenario s4 needs --stream-path: its stream must last --long');
      const headers = headersFlag((values.header as string[] | undefined) ?? []);
      const kubectl = podStateFlag(values['pod-state'] === true, values.spec as string | undefined, values.kubectl as string | undefined);
      const plan = values.spec === undefined ? null : planGateway(loadSpecFile(values.spec as string));
      const prediction = predictionOf(plan);
      const interrupt = new AbortController();
      let poller: PodStatePoller | undefined;
      if (kubectl !== null && plan !== null) {
        const target = { kubectl, namespace: plan.gateway.namespace, selector: labelSelector(podChanges(plan).selectorLabels) };
        poller = new PodStatePoller(target, await listPods(target), interrupt.signal);
      }

      const onSigint = (): void => interrupt.abort();
      process.once('SIGINT', onSigint);
      const options: VerifyOptions = {
        url,
        terminate,
        ...(observe !== undefined ? { observe } : {}),
        durationMs: durationS * 1000,
        terminateAtMs: terminateAtS * 1000,
        tailMs: tailS * 1000,
        ratePerSecond: rps,
        connections,
        requestTimeoutMs: timeoutS * 1000,
        scenario: scenario as VerifyScenario,
        longMs: longS * 1000,
        ...(slowPath !== undefined ? { slowPath } : {}),
        ...(streamPath !== undefined ? { streamPath } : {}),
        headers,
        insecure: values.insecure === true,
        signal: interrupt.signal,
        ...(poller ? { podState: poller } : {}),
      };
      let report: VerifyReport;
      try {
        const result = await runVerify(options);
        const summary = summarize(result.records, result.terminationAt ?? result.loadStartMs, result.paths, prediction);
        const pods: PodStateCapture | undefined = poller ? { pods: poller.pods, last: poller.last, polling: poller.polling() } : undefined;
        report = verifyReport(
          result,
          summary,
          { url: url.href, scenario, load: { ratePerSecond: rps, connections, durationMs: durationS * 1000, requestTimeoutMs: timeoutS * 1000 } },
          pods,
        );
      } finally {
        process.removeListener('SIGINT', onSigint);
        await poller?.stop();
      }
      const json = `${JSON.stringify(report, null, 2)}\n`;
      if (values.report !== undefined) writeReport(values.report as string, { 'verify.json': json, 'timeline.svg': renderVerifySvg(report) });
      process.stdout.write(format === 'json' ? json : renderVerifyText(report));
      return report.verdict.status === 'loss' ? 1 : 0;
    },
  );
}
