import { Duration } from '../core/duration';
import type { HaproxyLb } from '../lb/haproxy/schema';
import { backendName, header, healthProbePort, LB_HEALTH_PATH, planned, withTrailingComments, type LbConfigInput, type Line } from './text';

/** HAProxy times take whole numbers: `2s`, or milliseconds below that resolution. */
const haproxyTime = (seconds: number): string => Duration.seconds(seconds).inWholeUnits();

/**
 * The HAProxy `backend` section the plan assumes (docs/facts.md §2, §3): the probe on the sidecar's
 * LB endpoint, the detection parameters, what DOWN does to live sessions, what happens to a
 * connection the draining pod refuses, and the graceful signal when soft-drain is chosen.
 */
export function renderHaproxy(lb: HaproxyLb, input: LbConfigInput): string {
  const { plan } = input;
  const probePort = healthProbePort(plan.health);
  const fastinter = lb.fastinter ?? lb.inter;
  const drainFirst = plan.sequence === 'drain-first';

  const lines: Line[] = [
    { text: 'mode http', why: 'HTTP checks and HTTP-level retries need HTTP mode' },
    {
      text: `option httpchk GET ${LB_HEALTH_PATH}`,
      why: "probe the sidecar's LB endpoint: it flips on the plan's schedule (/health is readiness and flips later)",
    },
  ];
  if (lb.disableOn404) {
    lines.push({ text: 'http-check disable-on-404', why: 'soft-drain: the sidecar answers 404 first -> NOLB: no new sessions, live ones finish' });
  }
  lines.push({
    text: `timeout server ${haproxyTime(plan.timings.drainTimeoutSeconds)}`,
    why: `HAProxy itself must not cut a request the drain waits for (drain timeout ${plan.timings.drainTimeoutSeconds}s)`,
  });
  lines.push({
    text: `retries ${lb.retries}`,
    why: lb.retries > 0 ? 'a connect the draining pod refuses is tried again' : 'no retries: a refused connect fails at once',
  });
  if (lb.redispatch) {
    lines.push({
      text: 'option redispatch',
      why: drainFirst
        ? 'drain-first needs a refused connect re-sent to another server (only connects under way at DOWN are still cut: disable-on-404 removes that)'
        : 're-send a refused connect to another server (not needed by this sequence, harmless)',
    });
  } else {
    lines.push({
      text: 'no option redispatch',
      why: drainFirst
        ? 'plan assumes refused connects are NOT re-sent: drain-first loses them (finding drain-first-without-redispatch)'
        : `${plan.sequence} does not need redispatch: the LB stops sending before the pod stops accepting`,
    });
  }
  if (lb.httpServerClose ?? drainFirst) {
    lines.push({
      text: 'option http-server-close',
      why:
        (drainFirst
          ? 'drain-first: a new connection to the pod per request, so none carries a request past the drain (Envoy closes a kept-alive connection only with its next response) and none the pod closes is reused; with proto h2 servers the drain reaches the pod as GOAWAY instead: measured under load, streams in flight finished (a drain_timeout shorter than them included), new streams HAProxy opened on a draining connection were served, and new connections to the pod were refused and redispatched; soft-drain lost nothing, drain-first only the connects cut at DOWN its plan predicts (docs/e2e/LOAD.md)'
          : 'a new connection to the pod per request (spec httpServerClose)') +
        '; cost: one TCP connect to the pod per request (plus a TLS handshake with ssl servers), and a TIME_WAIT socket on HAProxy per request',
    });
  } else if (drainFirst) {
    lines.push({
      text: 'option http-keep-alive',
      why: `connections to the pod are reused (httpServerClose: false): each can carry one more request after the drain, so the drain timeout waits for two (${planned(plan, 'drainTimeoutSeconds')}); finding drain-first-connection-reuse`,
    });
  }
  if (lb.retryOnEmptyResponse) {
    lines.push({
      text: 'retry-on conn-failure empty-response',
      why: 'a GET that meets the keep-alive race on a connection the draining pod closes is sent again (conn-failure keeps the refused-connect retries)',
    });
    lines.push({
      text: 'http-request disable-l7-retry unless METH_GET',
      why: 'only GET and HEAD are replayed: a request that may have done something is never sent twice',
    });
  }
  lines.push({ text: 'default-server check', why: 'every gateway pod is health-checked' });
  lines.push({
    text: `default-server inter ${haproxyTime(lb.inter)} fastinter ${haproxyTime(fastinter)} fall ${lb.fall}`,
    why: `detection <= ${planned(plan, 'lbDetectSeconds')}: the plan's LB buffer waits this long`,
  });
  lines.push({ text: `default-server rise ${lb.rise}`, why: 'recovery only: a new pod takes traffic after rise good checks' });
  if (lb.onMarkedDown === 'shutdown-sessions') {
    lines.push({
      text: 'default-server on-marked-down shutdown-sessions',
      why: 'DOWN kills live sessions: health fails only after in-flight reached 0 (or the LB stopped sending before)',
    });
  } else {
    lines.push({ text: '', why: 'no on-marked-down: health-first relies on HAProxy keeping live sessions when a server goes DOWN' });
  }
  lines.push(
    probePort !== undefined
      ? { text: `default-server port ${probePort}`, why: "probes go to the sidecar's health port, not the traffic port" }
      : {
          text: '',
          why: "default-server port <health NodePort>: probes must reach the sidecar's health port (Kubernetes allocates it; read it from the health Service)",
        },
  );

  const servers = input.servers ?? [];
  servers.forEach((s, i) => {
    const check = s.checkPort !== undefined && s.checkPort !== probePort ? ` port ${s.checkPort}` : '';
    lines.push({ text: `server gw-${i + 1} ${s.host}:${s.port}${check}`, why: check ? 'gateway pod; its sidecar health port' : 'gateway pod' });
  });
  if (servers.length === 0) {
    lines.push({ text: '', why: 'server gw-<n> <node-ip>:<traffic node port>   (one per node; gracegate lb-config --servers fills these in)' });
  }
  return [...header('HAProxy', input), `backend ${backendName(input)}`, ...withTrailingComments(lines, '    '), ''].join('\n');
}
