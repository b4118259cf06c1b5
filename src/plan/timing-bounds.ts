import { MAX_DURATION_SECONDS } from '../core/duration';
import { GracegateError } from '../core/errors';
import type { Derived } from '../model/derived';

/** A timing the plan derived that the sidecar could not time; one problem per timing (exit 2 from the CLI). */
export class TimingOutOfRangeError extends GracegateError {
  constructor(problems: readonly string[]) {
    super(problems.map((message) => ({ message })));
  }
}

/**
 * Every timing is a wait the sidecar or the kubelet runs, so each must fit the longest duration
 * gracegate accepts (MAX_DURATION_SECONDS, one Node.js timer). The spec's durations are each
 * bounded on their own; a sum or a product of them (1.2 x p99, detection x count) is checked here,
 * naming the spec fields it comes from.
 */
export function checkTimingBounds(derivations: Readonly<Record<string, Derived>>): void {
  const problems: string[] = [];
  for (const [name, d] of Object.entries(derivations)) {
    if (d.unit !== 'seconds' || d.value <= MAX_DURATION_SECONDS) continue;
    const fromSpec = Object.values(d.inputs)
      .map((i) => i.source)
      .filter((s) => s.startsWith('spec.'));
    const lower =
      fromSpec.length > 0
        ? `lower ${[...new Set(fromSpec)].join(', ')}`
        : `inputs: ${Object.entries(d.inputs)
            .map(([k, i]) => `${k}=${i.value}`)
            .join(', ')}`;
    problems.push(
      `${name} = ${d.formula} = ${d.value}s is longer than ${MAX_DURATION_SECONDS}s (about 24.8 days), the longest wait gracegate can time; ${lower}`,
    );
  }
  if (problems.length > 0) throw new TimingOutOfRangeError(problems);
}
