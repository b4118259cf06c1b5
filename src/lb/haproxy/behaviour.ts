import { roundSeconds } from '../../core/duration';
import type { HaproxyLb } from './schema';
import { derived, specInput, type GivenPaths } from '../../model/derived';
import type { LbBehaviour } from '../../model/lb-behaviour';

const P = 'spec.loadBalancer';

/**
 * HAProxy: after the flip the next check comes within `inter`; each further failure within
 * `fastinter` (HAProxy checks faster while a server is transitioning). DOWN after `fall` failures.
 */
export function haproxyBehaviour(lb: HaproxyLb, given: GivenPaths): LbBehaviour<HaproxyLb['model']> {
  const fastinter = lb.fastinter ?? lb.inter;
  const inputs = {
    inter: specInput(given, `${P}.inter`, lb.inter, 'HAProxy inter 2000 ms (docs/facts.md §3)'),
    fall: specInput(given, `${P}.fall`, lb.fall, 'HAProxy fall 3 (docs/facts.md §3)'),
    fastinter: given.has(`${P}.fastinter`)
      ? specInput(given, `${P}.fastinter`, fastinter, '')
      : { value: fastinter, source: 'default: HAProxy fastinter = inter (docs/facts.md §3)' },
  };
  const shutdown = lb.onMarkedDown === 'shutdown-sessions';
  const redispatch = lb.redispatch && lb.retries > 0;
  return {
    model: 'haproxy',
    probeIntervalSeconds: lb.inter,
    detect: derived(roundSeconds(lb.inter + (lb.fall - 1) * fastinter), 'inter + (fall - 1) x fastinter', inputs),
    // A DOWN server is checked every downinter; once one check passes it is transitioning and
    // checked every fastinter until `rise` checks in a row have passed.
    recover: derived(roundSeconds((lb.downinter ?? lb.inter) + (lb.rise - 1) * fastinter), 'downinter + (rise - 1) x fastinter', {
      downinter: given.has(`${P}.downinter`)
        ? specInput(given, `${P}.downinter`, lb.downinter ?? lb.inter, '')
        : { value: lb.inter, source: 'default: HAProxy downinter = inter (docs/facts.md §3)' },
      rise: specInput(given, `${P}.rise`, lb.rise, 'HAProxy rise 2 (docs/facts.md §3)'),
      fastinter: inputs.fastinter,
    }),
    propagation: { value: 0, source: 'HAProxy stops sending at DOWN' },
    cutsSessionsOnDown: shutdown,
    onDown: shutdown ? 'on-marked-down shutdown-sessions: live sessions are killed' : 'on-marked-down none: live sessions continue',
    resendsRefusedConnections: redispatch ? 'yes' : 'no',
    resendDetail: redispatch
      ? `retries ${lb.retries} + option redispatch: a refused connect is retried on another server`
      : lb.retries > 0
        ? `retries ${lb.retries} without option redispatch: a refused connect is retried on the same server, then fails (measured: HTTP 503)`
        : 'retries 0: a refused connect fails at once',
    // Omitted, httpServerClose is written by lb-config for drain-first (the only order that reads this).
    reusesConnections: lb.httpServerClose === false,
    reuseDetail:
      lb.httpServerClose === false
        ? 'HAProxy keeps its connections to the pod alive and reuses them (httpServerClose: false; HAProxy defaults to option http-keep-alive and http-reuse safe)'
        : 'option http-server-close: HAProxy opens a new connection to the pod for every request and reuses none',
    ...(lb.disableOn404 ? { gracefulSignal: { status: 404, lbState: 'NOLB (no new sessions, existing ones continue)', source: `${P}.disableOn404` } } : {}),
    probeReachesSidecar: true,
    // Outside the cluster: it needs a node port or host port.
    probesPodIp: false,
  };
}
