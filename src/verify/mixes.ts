/**
 * The request mixes of the end-to-end scenarios, defined once for `gracegate verify` and the harness
 * (test/proof/harness/scenarios.ts): lengths of 50 ms - 2 s and a 1.5 s stream, the shape of
 * docs/facts.md §2's 50-3000 ms traffic, short enough not to hold a staging gateway's workers.
 */
import type { LoadOptions, RequestSpec } from './load';

export const MIXED: LoadOptions['mix'] = [
  { weight: 4, spec: { kind: 'slow', ms: 50 } },
  { weight: 3, spec: { kind: 'slow', ms: 200 } },
  { weight: 2, spec: { kind: 'slow', ms: 500 } },
  { weight: 2, spec: { kind: 'slow', ms: 1000 } },
  { weight: 1, spec: { kind: 'slow', ms: 2000 } },
  { weight: 1, spec: { kind: 'stream', chunks: 10, intervalMs: 150 } },
];

/** The light background beside S1's long request and S4's stream: the LB's view of the pod under traffic. */
export const BACKGROUND: LoadOptions['mix'] = [
  { weight: 1, spec: { kind: 'slow', ms: 50 } },
  { weight: 1, spec: { kind: 'slow', ms: 200 } },
];

/** `gracegate verify --scenario`: the harness's scenarios, as a load a user can point at staging. */
export const VERIFY_SCENARIOS = ['s1', 's3', 's4', 's5', 'rolling'] as const;
export type VerifyScenario = (typeof VERIFY_SCENARIOS)[number];

/**
 * A scenario's load: the steady mix, and the one request it starts on a connection of its own just
 * before the termination (S1 a long request, S4 a stream), sized by `longMs`.
 */
export function scenarioLoad(scenario: VerifyScenario, longMs: number): { mix: LoadOptions['mix']; single?: { spec: RequestSpec; label: string } } {
  switch (scenario) {
    case 's1':
      return { mix: BACKGROUND, single: { spec: { kind: 'slow', ms: longMs }, label: 'long request' } };
    case 's4':
      return { mix: BACKGROUND, single: { spec: { kind: 'stream', chunks: Math.max(1, Math.round(longMs / 150)), intervalMs: 150 }, label: 'stream' } };
    default:
      return { mix: MIXED };
  }
}
