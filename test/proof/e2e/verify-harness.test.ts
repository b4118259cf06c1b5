import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLValidator } from 'fast-xml-parser';
import { planGateway } from '../../../src/plan/plan-gateway';
import { podChanges } from '../../../src/pod/pod-changes';
import { resolveGatewaySpec } from '../../../src/schema/parse-spec';
import type { VerifyReport } from '../../../src/verify/report';
import { TERMINATION_EVENTS } from '../../../src/contract/hc';
import { kubectlShim, shimCalls } from '../../support/kubectl-shim';
import { REPO_ROOT } from '../../support/repo';
import type { FrontLb } from '../harness/front-lb';
import { Pod } from '../harness/pod';
import { istioProxy } from '../harness/proxies';
import { DOWN_RACE_WINDOW_MS } from '../harness/expect';
import { sleep, waitFor } from '../harness/proc';
import { labSpec, LB_SETTINGS, serverOf, startFrontLb } from '../harness/scenario';
import { gracegateTermination, type TerminationLog } from '../harness/terminations';

/**
 * `gracegate verify` pointed at the end-to-end harness as if it were a user's staging gateway: two
 * pods (real Envoy + the real sidecar) behind a real HAProxy running `gracegate lb-config`'s output.
 * verify's --terminate command touches a file; the test sees it and deletes a pod the way the
 * harness's kubelet does (both preStop hooks, SIGTERM, SIGKILL at the grace period), then touches
 * a second file that verify's --observe command waits for. HAProxy's own log of the same run is
 * the harness's count: every request verify counts, HAProxy logged, with the same outcome.
 *
 * drain-first behind shutdown-sessions without redispatch: the plan predicts refused connects
 * (HTTP 503 from HAProxy), so the run has failures of a kind both sides name by status code.
 *
 * --pod-state runs through a kubectl shim (test/support/kubectl-shim.ts): `get pods` lists the two
 * pods, `exec POD -c gracegate-hc -- gracegate state --config /etc/gracegate/hc.json` runs the real
 * `gracegate state` with that pod's config, against its real sidecar's control port.
 */
test("verify against the harness: its counts equal HAProxy's log of the same run, failures on the termination's clock", { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gg-verify-'));
  const specObject = labSpec(LB_SETTINGS.flushNoRedispatch, 2);
  const specFile = join(dir, 'gateway.yaml');
  writeFileSync(specFile, JSON.stringify(specObject, null, 2));
  const plan = planGateway(resolveGatewaySpec(specObject, specFile));
  const changes = podChanges(plan);
  const proxy = istioProxy();
  const pods: Pod[] = [];
  let lb: FrontLb | undefined;
  let watching = true;
  try {
    for (let i = 0; i < 2; i++) pods.push(await Pod.start(`pod-${i + 1}`, dir, plan, changes, proxy));
    lb = await startFrontLb(dir, specFile, plan, pods, proxy);
    for (let i = 0; i < pods.length; i++) await lb.waitStatus(serverOf(i), /^UP/, 10_000);
    const front = lb;

    const terminateFile = join(dir, 'terminate');
    const doneFile = join(dir, 'terminated');
    const reportDir = join(dir, 'report');
    const kubectlLog = join(dir, 'kubectl.log');
    const kubectl = kubectlShim(dir, { pods: Object.fromEntries(pods.map((p) => [p.name, p.configFile])), log: kubectlLog });
    // The harness's side: the pod leaves when verify's --terminate command asks.
    let termination: TerminationLog | undefined;
    let terminateSeenAt = 0;
    const harness = (async () => {
      while (watching && !existsSync(terminateFile)) await sleep(10);
      if (!watching) return;
      terminateSeenAt = Date.now();
      termination = await gracegateTermination(pods[0]!, plan);
      writeFileSync(doneFile, '');
    })();

    const args = [
      join(REPO_ROOT, 'bin', 'gracegate.js'),
      'verify',
      '--url',
      `http://127.0.0.1:${front.port}/slow?ms=50`,
      '--slow-path',
      '/slow?ms={ms}',
      '--stream-path',
      '/stream?chunks={chunks}&intervalMs={intervalMs}',
      '--terminate',
      `touch '${terminateFile}'`,
      '--observe',
      `while [ ! -e '${doneFile}' ]; do sleep 0.05; done`,
      '--terminate-at',
      '1.5s',
      '--tail',
      '1s',
      '--duration',
      '20s',
      '--rps',
      '400',
      '--connections',
      '12',
      '--spec',
      specFile,
      '--pod-state',
      '--kubectl',
      kubectl,
      '--format',
      'json',
      '--report',
      reportDir,
    ];
    const cli = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    cli.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    cli.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    const code = await new Promise<number | null>((resolve) => cli.on('close', resolve));
    watching = false;
    await harness;
    assert.ok(code === 0 || code === 1, `verify exited ${code}: ${stderr}`);
    const report = JSON.parse(stdout) as VerifyReport;
    assert.ok(termination, 'the harness terminated a pod when verify asked');
    assert.equal(report.stoppedBy, 'observe', "the load stopped at the observe command's exit plus the tail");
    assert.equal(report.terminate?.code, 0);
    assert.equal(report.observe?.code, 0);
    // verify's clock: the termination at 0, the observe command's exit where the pod had gone.
    const podGoneMs = termination!.endMs - terminateSeenAt;
    assert.ok(
      Math.abs(report.observe!.endMs! - podGoneMs) < 300,
      `observe exit ${report.observe!.endMs} ms, pod gone ${podGoneMs} ms after the harness saw the request`,
    );

    // HAProxy logs every request when it ends, at the latest at its 30 s client/server timeouts: a
    // request verify gave up on (its own timeout, on a loaded machine) is logged only then. Wait
    // (bounded by those timeouts) for the preflight request + the run's.
    await waitFor('HAProxy to log every request', 35_000, () => (front.requestLog.length >= report.requests + 1 ? true : undefined), 100).catch(
      () => undefined,
    );
    const log = front.requestLog;
    assert.equal(report.cancelled, 0);
    assert.equal(
      log.length,
      report.requests + 1,
      `HAProxy logged ${log.length} requests, verify counted ${report.requests} + 1 preflight (verify's failures: ${JSON.stringify(report.failuresByKind)})`,
    );
    const served = log.filter((l) => l.status === 200 && l.terminationState === '----').length - 1;
    assert.equal(report.ok, served, `verify ok ${report.ok}, HAProxy served ${served} in full (besides the preflight)`);
    const byStatus = (status: number): number => log.filter((l) => l.status === status).length;
    for (const [kind, n] of Object.entries(report.failuresByKind)) {
      if (kind.startsWith('http-')) assert.equal(n, byStatus(Number(kind.slice(5))), `${kind}: verify ${n}, HAProxy ${byStatus(Number(kind.slice(5)))}`);
    }
    // And HAProxy says what they were, as the harness's classification reads it (isRefusedConnect):
    // a 503 for a connect to the leaving pod's server refused on every retry (SC) or flushed at DOWN (DC).
    for (const l of log.filter((x) => x.status === 503))
      assert.ok(l.server === serverOf(0) && /^[SD]C/.test(l.terminationState), `not a refused connect to ${serverOf(0)}: ${l.text}`);
    const abnormal = log.filter((l) => !(l.status === 200 && l.terminationState === '----')).length;
    assert.equal(
      report.failures,
      abnormal,
      `verify failures ${JSON.stringify(report.failuresByKind)}, HAProxy lines not served in full: ${log
        .filter((l) => !(l.status === 200 && l.terminationState === '----'))
        .map((l) => l.text)
        .join('\n')}`,
    );
    // Each failure on the termination's clock, checked against the harness's: verify's time 0 (the
    // command's start) is just before the harness saw the file (the touch's start-up, a 10 ms poll),
    // and every refused connect falls between the proxy's drain [3] (sidecar state) and HAProxy's
    // DOWN of that pod (its log), the window in which the plan predicts them.
    const t0 = Date.parse(report.terminationStartedAt!);
    const lag = terminateSeenAt - t0;
    assert.ok(lag >= 0 && lag < 1000, `verify's time 0 ${lag} ms before the harness saw the termination asked`);
    const drainAt = termination!.marks.find((m) => m.id === 3)!.atMs;
    const downAt = front.events.find((e) => e.server === serverOf(0) && e.state === 'DOWN' && e.atMs >= terminateSeenAt)!.atMs;
    for (const f of report.failed) {
      const at = t0 + f.startMs;
      assert.ok(
        at >= drainAt - DOWN_RACE_WINDOW_MS && at <= downAt + DOWN_RACE_WINDOW_MS,
        `${f.kind} at ${f.startMs} ms: outside the drain [3] (${drainAt - t0} ms) .. DOWN (${downAt - t0} ms)`,
      );
    }
    assert.ok(report.requests > 50, `enough traffic: ${report.requests}`);
    // The plan predicts refused connects here: a failure is 'predicted', never 'loss'.
    assert.notEqual(report.verdict.status, 'loss', report.verdict.text);
    assert.equal(code, 0);
    const svg = readFileSync(join(reportDir, 'timeline.svg'), 'utf8');
    assert.equal(XMLValidator.validate(svg), true);
    assert.match(svg, /termination command starts/);
    assert.match(svg, /--observe command exits/);
    assert.deepEqual(JSON.parse(readFileSync(join(reportDir, 'verify.json'), 'utf8')).failuresByKind, report.failuresByKind);

    // --pod-state: the leaving pod's events [1]-[4], read through kubectl exec while it ran, are
    // the sidecar's own (its final state file, to the ms), after time 0, in the sequence's order.
    const [leaving, staying] = report.podStates!;
    assert.deepEqual([leaving!.pod, leaving!.terminated, staying!.pod, staying!.terminated], ['pod-1', true, 'pod-2', false]);
    assert.equal(staying!.state, 'OPEN');
    const observed = leaving!.events.filter((e) => e.id <= 4);
    // drain-first's order: the proxy drain [3], in-flight zero [4] with the LB answer failing [1],
    // readiness [2] at CLOSED moments before the hc exits. verify sees what its last answer held (one
    // kubectl exec takes most of a second on a loaded machine): the events it read are the first ones
    // of that order, as far as the last state it read ([3] from DRAINING, [1] from CLOSING, all from
    // CLOSED), each equal to the sidecar's state file to the ms; the rest followed its last answer.
    const ORDER = [3, 4, 1, 2] as const;
    const atLeast = { DRAINING: 1, CLOSING: 3, CLOSED: 4 }[leaving!.state as 'DRAINING' | 'CLOSING' | 'CLOSED'];
    assert.ok(atLeast !== undefined, `verify's last answer from the leaving pod was ${leaving!.state}, not a state of its sequence`);
    const seen = ORDER.filter((id) => observed.find((e) => e.id === id)?.atMs !== null);
    assert.deepEqual(seen, ORDER.slice(0, seen.length), `verify read a prefix of the sequence's events: ${JSON.stringify(observed)}`);
    assert.ok(seen.length >= atLeast, `from a last answer of ${leaving!.state} verify read [${seen.join('], [')}]`);
    if (seen.length < 4) t.diagnostic(`[${ORDER.slice(seen.length).join('], [')}] after verify's last answer (${leaving!.state})`);
    for (const m of termination!.marks) {
      if (!(seen as readonly number[]).includes(m.id)) continue;
      const e = observed.find((x) => x.id === m.id)!;
      assert.ok(e.atMs !== null && e.atMs >= 0, `[${e.id}] at ${e.atMs} ms`);
      assert.equal(e.atMs, m.atMs - t0, `[${e.id}] ${e.name}: verify ${e.atMs} ms, the sidecar's state file ${m.atMs - t0} ms`);
    }
    assert.deepEqual(termination!.marks.map((m) => m.id).sort(), [1, 2, 3, 4], 'the sidecar recorded [1]-[4]');
    const at = (id: number): number => observed.find((e) => e.id === id)!.atMs!;
    const times = seen.map(at);
    assert.ok(
      times.every((x, i) => i === 0 || (ORDER[i] === 1 ? x >= times[i - 1]! : x > times[i - 1]!)),
      `in order: ${seen.map((id, i) => `[${id}] ${times[i]}`).join(', ')} ms`,
    );
    assert.ok(report.podStatePolling!.polls >= 4, JSON.stringify(report.podStatePolling));
    const execs = shimCalls(kubectlLog).filter((c) => c.args[0] === 'exec');
    assert.ok(
      execs.some((c) => c.status === 0 && c.ran?.includes(pods[0]!.configFile)) && execs.some((c) => c.status === 0 && c.ran?.includes(pods[1]!.configFile)),
      "gracegate state ran against each pod's sidecar",
    );
    assert.ok(execs.every((c) => c.args.join(' ').includes(`-c gracegate-hc -- gracegate state --config /etc/gracegate/hc.json`)));
    for (const id of seen) assert.ok(svg.includes(`[${id}] ${TERMINATION_EVENTS[id - 1]!.name} (pod-1)`), `the SVG draws [${id}]`);
    t.diagnostic(
      `pod-1 events: ${leaving!.events.map((e) => `[${e.id}] ${e.atMs}`).join(', ')} ms; ${report.podStatePolling!.polls} polls, ${report.podStatePolling!.failures} failed (${report.podStatePolling!.lastError})`,
    );
    t.diagnostic(
      `time 0 ${lag} ms before the harness saw it; drain [3] at ${drainAt - t0} ms, DOWN at ${downAt - t0} ms; failures at ${report.failed.map((f) => f.startMs).join(', ')} ms`,
    );
    t.diagnostic(
      `verify: ${report.requests} requests, failures ${JSON.stringify(report.failuresByKind)}; HAProxy: ${log.length} lines (1 preflight), ${abnormal} not served in full; ${report.verdict.status}`,
    );
  } finally {
    watching = false;
    await Promise.all([...pods.map((p) => p.kill()), lb?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
});
