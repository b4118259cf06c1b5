/**
 * In-flight at each of the six events: what an on-call engineer asks first after a bad rollout
 * ("how many requests were still running when the LB marked the pod DOWN?"). The poll loop counts
 * only while draining, so the count is read once more at each event's moment: at once for the
 * observed events, at the expected time for [5] and [6] (estimates: the LB is not observable from
 * the pod). [3] takes the poll's first count after the drain calls, [4] the poll's last (0, or what
 * was left at the drain timeout). Kept in memory for /metrics; a failed read leaves it unknown.
 */
import type { EventKey } from '../contract/hc';
import type { Clock, EnvoyPort } from './types';

export class EventInFlight {
  private readonly values = new Map<EventKey, number>();
  private readonly pending = new Map<EventKey, () => void>();

  constructor(
    private readonly envoy: Pick<EnvoyPort, 'inFlight'>,
    private readonly clock: Clock,
  ) {}

  /** The event was marked at `at`: read the count then (at once when `at` has passed). */
  marked(event: EventKey, at: number): void {
    this.pending.get(event)?.();
    const wait = at - this.clock.now();
    const cancel = this.clock.setTimer(wait, () => {
      this.pending.delete(event);
      this.envoy.inFlight().then(
        (n) => {
          this.values.set(event, n);
        },
        () => {},
      );
    });
    this.pending.set(event, cancel);
  }

  /** A count the poll loop read at the event's moment; `ifUnknown`: keep a value already there. */
  record(event: EventKey, count: number, ifUnknown = false): void {
    if (ifUnknown && this.values.has(event)) return;
    this.pending.get(event)?.();
    this.pending.delete(event);
    this.values.set(event, count);
  }

  /** The count at the event; null: not reached yet, or unreadable. */
  countAt(event: EventKey): number | null {
    return this.values.get(event) ?? null;
  }

  /** Forgets everything (a reopen starts a fresh pod life). */
  reset(): void {
    this.stop();
    this.values.clear();
  }

  stop(): void {
    for (const cancel of this.pending.values()) cancel();
    this.pending.clear();
  }
}
