/**
 * In-flight at each of the six events: what an on-call engineer asks first after a bad rollout
 * ("how many requests were still running when the LB marked the pod DOWN?"). The poll loop counts
 * only while draining, so the count is read once more at each event's moment: at once for the
 * observed events, at the expected time for [5] and [6] (estimates: the LB is not observable from
 * the pod). [3] takes the poll's first count after the drain calls, [4] the poll's last (0, or what
 * was left at the drain timeout). Kept in memory for /metrics; a failed read leaves it unknown.
 */
import type { Clock, EnvoyPort } from './types';

export class EventInFlight {
  private readonly values: (number | null)[];
  private readonly pending = new Map<number, () => void>();

  constructor(
    private readonly envoy: Pick<EnvoyPort, 'inFlight'>,
    private readonly clock: Clock,
    events: number,
  ) {
    this.values = Array.from({ length: events }, () => null);
  }

  /** Event `index` was marked at `at`: read the count then (at once when `at` has passed). */
  marked(index: number, at: number): void {
    this.pending.get(index)?.();
    const wait = at - this.clock.now();
    const cancel = this.clock.setTimer(wait, () => {
      this.pending.delete(index);
      this.envoy.inFlight().then(
        (n) => {
          this.values[index] = n;
        },
        () => {},
      );
    });
    this.pending.set(index, cancel);
  }

  /** A count the poll loop read at the event's moment; `ifUnknown`: keep a value already there. */
  record(index: number, count: number, ifUnknown = false): void {
    if (ifUnknown && this.values[index] !== null) return;
    this.pending.get(index)?.();
    this.pending.delete(index);
    this.values[index] = count;
  }

  /** The count at each event (index 0 is [1]); null: not reached yet, or unreadable. */
  get counts(): readonly (number | null)[] {
    return [...this.values];
  }

  /** Forgets everything (a reopen starts a fresh pod life). */
  reset(): void {
    this.stop();
    this.values.fill(null);
  }

  stop(): void {
    for (const cancel of this.pending.values()) cancel();
    this.pending.clear();
  }
}
