/**
 * Which runs the full report and the short test make, from a calibrated rate: shared so that the
 * test is a shorter version of the same scenario, not another one.
 */
import type { LoadRunConfig, LoadSequence } from './run';

/** The long requests: a few connections, 200 ms - 2 s each (the lab's longRequestP99Seconds is 2). */
export const LONG = { longConnections: 8, longMs: [200, 2000] as [number, number] };

export const ONE_POD_SEQUENCES: LoadSequence[] = ['drain-first', 'health-first', 'soft-drain', 'article-order'];

/** The full report's runs on one Envoy version, at `rate`. */
export function fullRuns(version: string, rate: number): LoadRunConfig[] {
  const base = { version, rate, ...LONG, warmMs: 4000, tailMs: 4500 };
  return [
    ...ONE_POD_SEQUENCES.map((sequence) => ({ ...base, sequence })),
    { ...base, sequence: 'soft-drain', rolling: true },
    // HTTP/2 from HAProxy to the pods: Envoy's drain meets GOAWAY; h2load clients beside wrk.
    { ...base, sequence: 'drain-first', h2ToPods: true, h2Clients: { clients: 4, rpsPerClient: 20, seconds: 8 } },
    { ...base, sequence: 'soft-drain', h2ToPods: true, h2Clients: { clients: 4, rpsPerClient: 20, seconds: 8 } },
    // drain_timeout shorter than the long requests: does the last GOAWAY cut streams in flight?
    { ...base, sequence: 'soft-drain', h2ToPods: true, hcmDrainTimeoutMs: 200 },
  ];
}

/** The short version (npm test), at `rate`: the three sequences and the article order on one Envoy, soft-drain on the other. */
export function shortRuns(versions: string[], rate: number): LoadRunConfig[] {
  const base = { rate, ...LONG, warmMs: 2500, tailMs: 3500 };
  const [first, ...rest] = versions;
  return [
    ...(['drain-first', 'health-first', 'soft-drain', 'article-order'] as LoadSequence[]).map((sequence) => ({ ...base, version: first!, sequence })),
    ...rest.map((version) => ({ ...base, version, sequence: 'soft-drain' as LoadSequence })),
  ];
}
