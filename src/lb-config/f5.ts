import { Duration } from '../core/duration';
import type { F5Lb } from '../lb/f5/schema';
import { backendName, header, healthProbePort, LB_HEALTH_PATH, planned, withLeadingComments, type LbConfigInput, type Line } from './text';

/** A regular expression over the whole response that matches a 200 status line only. */
const F5_RECV_200 = '^HTTP/1\\.[01] 200';

/**
 * tmsh commands: the HTTP monitor (send, recv, recv-disable, interval, timeout) and the pool's
 * service-down-action (docs/facts.md §3). One `modify` per assumption, each preceded by its reason.
 */
export function renderF5(lb: F5Lb, input: LbConfigInput): string {
  const { plan } = input;
  const name = backendName(input);
  const mon = `${name}-hc`;
  const probePort = healthProbePort(plan.health);
  const send = `GET ${LB_HEALTH_PATH} HTTP/1.1\\r\\nHost: gracegate\\r\\nConnection: close\\r\\n\\r\\n`;

  const lines: Line[] = [
    { text: `create ltm monitor http ${mon} defaults-from http send "${send}"`, why: "probe the sidecar's LB endpoint (/health is readiness and flips later)" },
    {
      text: `modify ltm monitor http ${mon} destination *:${probePort ?? '<health NodePort>'}`,
      why: "probes go to the sidecar's health port, not the traffic port",
    },
  ];
  if (lb.recvDisable !== undefined) {
    // F5: when recv and recv-disable both match, the member stays enabled; recv must not match the signal.
    lines.push({
      text: `modify ltm monitor http ${mon} recv "OPEN"`,
      why: "UP only while the sidecar's state (the response body) is OPEN, so recv does not also match the recv-disable answer",
    });
    lines.push({
      text: `modify ltm monitor http ${mon} recv-disable "${lb.recvDisable}"`,
      why: `soft-drain: the sidecar answers 200 with "${lb.recvDisable}" first -> member disabled, existing connections continue`,
    });
  } else {
    // recv is a regular expression searched in the whole response, headers and body (F5 K5917):
    // anchored to the status line, nothing else in a 503 can pass for UP.
    lines.push({ text: `modify ltm monitor http ${mon} recv "${F5_RECV_200}"`, why: "UP only on a 200 status line; the sidecar's 503 fails the probe" });
  }
  lines.push({
    text: `modify ltm monitor http ${mon} interval ${Duration.seconds(lb.interval).wholeSecondsUp} timeout ${Duration.seconds(lb.timeout).wholeSecondsUp}`,
    why: `time-based: DOWN ${planned(plan, 'lbDetectSeconds')} after the last good answer; the plan's LB buffer waits this long`,
  });
  lines.push({ text: `create ltm pool ${name} monitor ${mon}`, why: 'the pool is judged by this monitor alone' });
  lines.push({
    text: `modify ltm pool ${name} slow-ramp-time ${Duration.seconds(lb.slowRampTime).wholeSecondsUp}`,
    why: `a new pod ramps up to its share over this time: recovery ~ ${planned(plan, 'lbRecoverSeconds')}, which minReadySeconds covers`,
  });
  lines.push({
    text: `modify ltm pool ${name} service-down-action ${lb.serviceDownAction}`,
    why: plan.loadBalancer.cutsSessionsOnDown
      ? `DOWN cuts live flows (${lb.serviceDownAction}): health fails only after in-flight reached 0 (or the LB stopped sending before)`
      : 'none: live flows survive DOWN, which health-first relies on',
  });
  lines.push({
    text: `modify ltm pool ${name} reselect-tries ${lb.reselectTries}`,
    why:
      lb.reselectTries > 0
        ? 'a connection the draining pod refuses is tried on another member: the plan counts refused connections as re-sent'
        : 'F5 default: a connection the pod refuses is reset to the client; the plan counts refused connections as lost',
  });
  const servers = input.servers ?? [];
  for (const s of servers) lines.push({ text: `modify ltm pool ${name} members add { ${s.host}:${s.port} }`, why: 'gateway pod (traffic port)' });
  if (servers.length === 0)
    lines.push({ text: '', why: `modify ltm pool ${name} members add { <node-ip>:<traffic node port> }   (one per node; --servers fills these in)` });
  return [...header('F5 BIG-IP LTM (tmsh)', input), ...withLeadingComments(lines), ''].join('\n');
}
