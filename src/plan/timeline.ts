import { roundSeconds } from '../core/duration';
import type { HcSidecarKind } from './hc-sidecar';
import type { LbBehaviour } from '../model/lb-behaviour';
import type { Timings } from './timings';
import { terminationEvent, type EventId, type Sequence } from '../contract/hc';

export type TimelineEntry = {
  /** 1-6 for the six events; absent for the Kubernetes milestones around them. */
  event?: EventId;
  name: string;
  /** Seconds after the preStop hooks start. */
  atSeconds: number;
  /** `at`: happens then; `by`: happens no later than then (depends on traffic). */
  bound: 'at' | 'by';
  note: string;
};

export type Timeline = { entries: TimelineEntry[]; lossless: boolean; losslessReason: string };

/**
 * istio-proxy's readiness probe as Istio's injector writes it for a gateway (GET /healthz/ready
 * :15021, every 15 s, NotReady after 4 failures: read off the live pods on the test cluster,
 * docs/cluster.md). The drain stops every Envoy listener, 15021 included: the pod turns NotReady
 * 45-60 s after the drain starts.
 */
export const ISTIO_PROXY_READINESS = { periodSeconds: 15, failureThreshold: 4 } as const;

function at(event: EventId, atSeconds: number, bound: 'at' | 'by', note: string): TimelineEntry {
  return { event, name: terminationEvent(event).title, atSeconds: roundSeconds(atSeconds), bound, note };
}

/**
 * The six events of the chosen sequence with their worst-case times, plus the Kubernetes
 * milestones (SIGTERM to the proxy, Envoy exit, SIGKILL). Lossless when [4] comes before [5]
 * on every path that carries requests and the LB stops sending before the pod stops accepting.
 */
export function buildTimeline(sequence: Sequence, lb: LbBehaviour, t: Timings, hcSidecar: HcSidecarKind = 'container'): Timeline {
  const D = t.drainTimeoutSeconds;
  const B = t.lbBufferSeconds;
  const detect = t.lbDetectSeconds;
  const flushNote = lb.cutsSessionsOnDown ? 'flush finds no session left' : 'none: the LB keeps sessions on DOWN';
  let events: TimelineEntry[];
  let lossless: boolean;
  let losslessReason: string;
  switch (sequence) {
    case 'drain-first':
      events = [
        at(3, 0, 'at', 'listeners stop: new connections refused; an open connection is closed with the first response begun after the drain'),
        at(4, D, 'by', lb.reuse.drainFirst ? 'drain timeout bounds the wait (two requests per reused connection)' : 'drain timeout bounds the wait'),
        at(1, D, 'by', '/health_check.html 503 at in-flight 0 (or the drain timeout)'),
        at(5, D + detect, 'by', `${detect}s after [1]`),
        at(6, D + detect, 'by', flushNote),
        at(2, D + B, 'by', '/health 503 one LB buffer after [1]'),
      ];
      // Never strictly lossless: the LB keeps choosing this pod until DOWN, and the flush cuts the
      // connects still under way at that instant (measured on HAProxy; drain-first-cuts-connects-at-down).
      lossless = false;
      losslessReason =
        lb.refused.value === 'resent'
          ? `[4] precedes [5] and connections refused while draining are re-sent elsewhere (${lb.refused.detail}); only the requests the LB is still connecting here at the instant of DOWN are cut (about requests/s x connect time: see drain-first-cuts-connects-at-down)`
          : `[4] precedes [5], but connections the LB sends while the proxy refuses them are lost unless re-sent (${lb.refused.detail})`;
      break;
    case 'health-first':
      events = [
        at(1, 0, 'at', '/health_check.html 503'),
        at(5, detect, 'by', `${detect}s after [1]`),
        at(6, detect, 'by', flushNote),
        at(3, B, 'at', 'drain after the LB buffer, when the LB has stopped sending'),
        at(4, B + D, 'by', 'drain timeout bounds the wait'),
        at(2, B + D, 'by', '/health 503 at in-flight 0'),
      ];
      lossless = !lb.cutsSessionsOnDown && lb.probeReachesSidecar;
      losslessReason = lossless
        ? '[5] comes before [4], but the LB keeps sessions on DOWN, and the proxy stops accepting only after the LB stopped sending'
        : 'the LB cuts sessions on DOWN before in-flight reaches zero';
      break;
    case 'soft-drain':
      events = [
        at(
          1,
          0,
          'at',
          `soft signal (${lb.gracefulSignal?.status}${lb.gracefulSignal?.body ? ` "${lb.gracefulSignal.body}"` : ''}): ${lb.gracefulSignal?.lbState}`,
        ),
        at(3, B, 'at', 'drain after the LB buffer, when the LB sends no new connections'),
        at(4, B + D, 'by', 'drain timeout bounds the wait'),
        at(2, B + D, 'by', '/health_check.html and /health 503 at in-flight 0'),
        at(5, B + D + detect, 'by', `${detect}s after the hard failure`),
        at(6, B + D + detect, 'by', 'flush (if any) finds no session left'),
      ];
      lossless = lb.probeReachesSidecar && lb.gracefulSignal?.stillSends === undefined;
      losslessReason =
        lb.gracefulSignal?.stillSends !== undefined
          ? `[4] precedes [5], but after the soft signal the LB still sends ${lb.gracefulSignal.stillSends}, and the drain refuses them`
          : '[4] precedes [5]; the LB stopped sending new connections at the soft signal, and existing ones finished';
      break;
  }
  const sigterm = roundSeconds(D + B);
  // The drain [3] closes 15021 as well: a drain still under way after the probe's failures turns the pod NotReady.
  const drainAt = events.find((e) => e.event === 3)!.atSeconds;
  const notReadyEarliest = drainAt + (ISTIO_PROXY_READINESS.failureThreshold - 1) * ISTIO_PROXY_READINESS.periodSeconds;
  const notReady: TimelineEntry[] =
    notReadyEarliest < sigterm
      ? [
          {
            name: 'the pod turns NotReady',
            atSeconds: roundSeconds(drainAt + ISTIO_PROXY_READINESS.failureThreshold * ISTIO_PROXY_READINESS.periodSeconds),
            bound: 'by',
            note: `a drain that lasts: it stopped Envoy's 15021 too, and istio-proxy's readiness fails ${ISTIO_PROXY_READINESS.failureThreshold} times ${ISTIO_PROXY_READINESS.periodSeconds} s apart (from ${roundSeconds(notReadyEarliest)} s); the gateway Service's endpoints drop the pod, so with externalTrafficPolicy Local that node's NodePort has no endpoint left for new connections; the health Service publishes not-ready addresses, and the LB's probe still reaches the sidecar`,
          },
        ]
      : [];
  const envoyExit = roundSeconds(sigterm + t.terminationDrainDurationSeconds);
  // KEP-753: a native sidecar's preStop runs with the others, its SIGTERM waits for the main
  // containers to exit; an ordinary container gets SIGTERM when its own preStop returns.
  const hcStop: TimelineEntry =
    hcSidecar === 'native'
      ? { name: 'SIGTERM to the hc sidecar (native)', atSeconds: envoyExit, bound: 'by', note: 'after the proxy container exited: the LB hears 503 until then' }
      : { name: 'SIGTERM to the hc sidecar', atSeconds: sigterm, bound: 'by', note: "when its own preStop returns: the LB's probes are refused from then on" };
  const entries: TimelineEntry[] = [
    ...events,
    ...notReady,
    { name: 'preStop hooks end; SIGTERM to the proxy container', atSeconds: sigterm, bound: 'by', note: 'the proxy is held until the sequence ends' },
    { name: 'Envoy exits', atSeconds: envoyExit, bound: 'by', note: 'terminationDrainDuration after SIGTERM' },
    hcStop,
    { name: 'SIGKILL deadline', atSeconds: t.terminationGracePeriodSeconds, bound: 'at', note: 'terminationGracePeriodSeconds (+2 s extension)' },
  ];
  entries.sort((a, b) => a.atSeconds - b.atSeconds);
  return { entries, lossless, losslessReason };
}
