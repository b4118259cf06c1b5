import { Duration } from '../core/duration';
import type { CitrixLb } from '../lb/citrix/schema';
import { backendName, header, healthProbePort, LB_HEALTH_PATH, planned, withLeadingComments, type LbConfigInput, type Line } from './text';

/**
 * NetScaler times: whole seconds as is, anything finer in milliseconds with its unit after the
 * value (`-interval <integer> [<units>]`, `add lb monitor` in the NetScaler command reference;
 * `units1..4` are NITRO field names, not CLI flags).
 */
function citrixTime(flag: string, seconds: number): string {
  const d = Duration.seconds(seconds);
  return d.isWholeSeconds ? `${flag} ${d.seconds}` : `${flag} ${d.ms} MSEC`;
}

/**
 * NetScaler CLI: the HTTP monitor the plan's detection time comes from, the TROFS signal for
 * soft-drain, and the service group (created here) with its downStateFlush (docs/facts.md §3,
 * CTX140147). The NetScaler CLI has no end-of-line comments, so each command is preceded by its
 * reason.
 */
export function renderCitrix(lb: CitrixLb, input: LbConfigInput): string {
  const { plan } = input;
  const name = backendName(input);
  const mon = `${name}-hc`;
  const probePort = healthProbePort(plan.health);
  // A trofsString alone is matched on the body, which only the ECV monitor reads.
  const ecv = lb.trofsString !== undefined && lb.trofsCode === undefined;
  const type = ecv ? 'HTTP-ECV' : 'HTTP';

  // A monitor can be turned from TROFS to plain but not back ("Graceful shutdown of services",
  // docs.netscaler.com): a TROFS code or string set after `add lb monitor` is refused, so it goes
  // on the add line itself.
  const gracefulTrofs = lb.trofsCode !== undefined || lb.trofsString !== undefined;
  const trofs = lb.trofsCode !== undefined ? ` -trofsCode ${lb.trofsCode}` : ecv ? ` -trofsString "${lb.trofsString}"` : '';
  const probe = ecv ? `-send "GET ${LB_HEALTH_PATH}"` : `-httpRequest "GET ${LB_HEALTH_PATH}"`;
  // The times go on the add line: a time's unit is chosen when the monitor is created, and the
  // downTime unit cannot be changed later (add lb monitor, NetScaler command reference).
  const times = [citrixTime('-interval', lb.interval), citrixTime('-resptimeout', lb.resptimeout), citrixTime('-downTime', lb.downTime)].join(' ');
  const lines: Line[] = [
    {
      text: `add lb monitor ${mon} ${type} ${probe} -customHeaders "Host: ${name}\\r\\n" -destPort ${probePort ?? '<health NodePort>'} ${times}${trofs}`,
      why:
        "probe the sidecar's LB endpoint on its health port (/health is readiness and flips later)" +
        '; a Host header: HTTP/1.1 requires one and this probe sends none unless told' +
        '; the times on the add line: their units are fixed when the monitor is created' +
        (lb.trofsCode !== undefined
          ? `; soft-drain: the sidecar answers ${lb.trofsCode} first -> TROFS: no new connections, active ones kept (one TROFS monitor per service; TROFS only on the add line)`
          : ecv
            ? `; soft-drain: the sidecar answers the body "${lb.trofsString}" first -> TROFS: no new connections, active ones kept (TROFS only on the add line)`
            : ''),
    },
    ecv
      ? { text: `set lb monitor ${mon} HTTP-ECV -recv "OPEN"`, why: "UP only while the sidecar's state (the response body) is OPEN" }
      : { text: `set lb monitor ${mon} HTTP -respCode ${lb.respCode.join(' ')}`, why: 'these codes mean UP; the sidecar answers 503 to fail' },
    {
      text: `set lb monitor ${mon} ${type} -retries ${lb.retries} -failureRetries ${lb.failureRetries}`,
      why: `detection ~ ${planned(plan, 'lbDetectSeconds')} (with the add line's -interval): the plan's LB buffer waits this long`,
    },
    {
      text: `set lb monitor ${mon} ${type} -successRetries ${lb.successRetries}`,
      why: "recovery only, with the add line's -downTime: when a new pod takes traffic",
    },
  ];
  if (gracefulTrofs && lb.persistenceType !== 'NONE') {
    lines.push({
      text: '',
      why: `set lb vserver <the gateway's vserver> -trofsPersistence ${lb.trofsPersistence}   (${
        lb.trofsPersistence === 'DISABLED'
          ? 'persistent clients leave a TROFS service too, as the plan assumes'
          : `TROFS keeps sending ${lb.persistenceType}-persistent clients: finding citrix-trofs-keeps-persistent-clients`
      })`,
    });
  }
  if (lb.trofsCode !== undefined && lb.trofsString !== undefined) {
    lines.push({ text: '', why: `trofsString "${lb.trofsString}" is read only by HTTP-ECV monitors; this HTTP monitor uses -trofsCode` });
  }
  lines.push({
    text: `add serviceGroup ${name} HTTP`,
    why: 'the service group of the gateway nodes; where it already exists NetScaler refuses this line and the lines below set it',
  });
  lines.push({
    text: `set serviceGroup ${name} -downStateFlush ${lb.downStateFlush}`,
    why:
      lb.downStateFlush === 'ENABLED'
        ? 'DOWN flushes live connections: health fails only after in-flight reached 0 (or the LB stopped sending before)'
        : 'health-first relies on live connections surviving DOWN',
  });
  if (lb.maxReq !== 0) {
    lines.push({
      text: `set serviceGroup ${name} -maxReq ${lb.maxReq}`,
      why:
        lb.maxReq === 1
          ? 'a new connection to the pod per request: none carries a request past the drain (CTX135155); cost: one TCP connect per request'
          : `at most ${lb.maxReq} requests per connection to the pod`,
    });
  } else if (plan.sequence === 'drain-first') {
    lines.push({
      text: '',
      why: `-maxReq 0 (NetScaler's default): connections to the pod are reused, each can carry one more request after the drain, so the drain timeout waits for two (${planned(plan, 'drainTimeoutSeconds')}); finding drain-first-connection-reuse`,
    });
  }
  lines.push({ text: `bind serviceGroup ${name} -monitorName ${mon}`, why: 'the service group is judged by this monitor alone' });
  if (lb.retryOnReset) lines.push(...citrixRequestRetry(name, lb.retryOnResetCount));
  const servers = input.servers ?? [];
  for (const s of servers) {
    lines.push({ text: `bind serviceGroup ${name} ${s.host} ${s.port}`, why: 'gateway pod (traffic port)' });
  }
  if (servers.length === 0) lines.push({ text: '', why: `bind serviceGroup ${name} <node-ip> <traffic node port>   (one per node; --servers fills these in)` });
  return [...header('Citrix NetScaler', input), ...withLeadingComments(lines), ''].join('\n');
}

/**
 * NetScaler's request retry (AppQoE, docs.netscaler.com "Request retry"): a request whose connection
 * the service resets goes to the next service instead of the reset going to the client. The resets
 * a drain causes come before the pod reads the request (a connect refused at the SYN, or one reset in
 * the listen backlog), so the policy takes every method.
 */
function citrixRequestRetry(name: string, count: number): Line[] {
  return [
    { text: 'enable ns feature appqoe', why: 'request retry is an AppQoE action' },
    {
      text: `add appqoe action ${name}-retry -retryOnReset YES -numRetries ${count}`,
      why: 'a connection the draining pod resets (refused at the SYN, or reset in its listen backlog) is load-balanced to the next service instead of the reset reaching the client',
    },
    { text: `add appqoe policy ${name}-retry -rule true -action ${name}-retry`, why: 'every request: the pod had not read any of them' },
    { text: '', why: `bind lb vserver <the gateway's vserver> -policyName ${name}-retry -priority 100` },
  ];
}
