/**
 * The GET /wait-closed requests waiting for the sequence to finish (istio-proxy's preStop), each
 * with its own bound, and the caps that keep strangers from crowding out the kubelet's hook.
 */
import { CLOSED, type HcState } from '../contract/hc';
import type { Clock, HealthAnswer, Logger, MachineCounters } from './types';

/**
 * At most this many /wait-closed requests wait at once, and this many from one source address. The
 * kubelet sends one per termination (hooks are delivered at least once, so perhaps two): the rest is
 * someone else. Beyond either cap the newest waiter is kept and an older one displaced, so the
 * proxy's own hook is never refused.
 */
export const MAX_WAITERS = 32;
export const MAX_WAITERS_PER_SOURCE = 4;
export const DISPLACED_REASON = 'displaced by a newer /wait-closed';

export type WaitClosed = { readonly answer: Promise<HealthAnswer>; cancel(): void };

type Waiter = { readonly source: string; resolve(answer: HealthAnswer): void; cancelTimer(): void };

export class Waiters {
  private readonly waiting = new Set<Waiter>();

  /** `state` is read when a waiter is answered early (its body says the state it left in). */
  constructor(
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly counters: Pick<MachineCounters, 'displacedWaiters'>,
    private readonly state: () => HcState,
  ) {}

  get size(): number {
    return this.waiting.size;
  }

  /**
   * A new waiter from `source`, answered by `releaseAll` or with 504 at `deadline` (epoch ms). A
   * source already holding MAX_WAITERS_PER_SOURCE gives up its oldest waiter, a full set the oldest
   * of the source holding the most (answered 503); the new waiter always waits.
   */
  add(source: string, deadline: number): WaitClosed {
    this.makeRoomFor(source);
    let waiter!: Waiter;
    const answer = new Promise<HealthAnswer>((resolve) => {
      const cancelTimer = this.clock.setTimer(deadline - this.clock.now(), () => {
        this.waiting.delete(waiter);
        this.log('warn', '/wait-closed reached its bound before the sequence finished', { state: this.state() });
        resolve({ status: 504, body: this.state() });
      });
      waiter = { source, resolve, cancelTimer };
    });
    this.waiting.add(waiter);
    return {
      answer,
      cancel: () => {
        waiter.cancelTimer();
        this.waiting.delete(waiter);
      },
    };
  }

  /** Answers every waiter: 200 CLOSED when the sequence finished, or the sidecar's stop answer. */
  releaseAll(answer: HealthAnswer = { status: 200, body: CLOSED }): void {
    for (const w of this.waiting) {
      w.cancelTimer();
      w.resolve(answer);
    }
    this.waiting.clear();
  }

  private makeRoomFor(source: string): void {
    const bySource = new Map<string, Waiter[]>();
    for (const w of this.waiting) bySource.set(w.source, [...(bySource.get(w.source) ?? []), w]);
    const own = bySource.get(source) ?? [];
    let victim: Waiter | undefined;
    if (own.length >= MAX_WAITERS_PER_SOURCE) victim = own[0];
    else if (this.waiting.size >= MAX_WAITERS) victim = [...bySource.values()].reduce((a, b) => (b.length > a.length ? b : a))[0];
    if (victim === undefined) return;
    victim.cancelTimer();
    this.waiting.delete(victim);
    this.counters.displacedWaiters++;
    this.log('warn', '/wait-closed waiter displaced: too many waiting', { source: victim.source, newcomer: source, waiters: this.waiting.size + 1 });
    victim.resolve({ status: 503, body: `${this.state()}: ${DISPLACED_REASON}` });
  }
}
