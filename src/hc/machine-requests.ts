/**
 * The drain controller's answers to the control port (POST /drain, /close-lb, /close, /reopen)
 * and the witness port (GET /wait-closed, /hc-stopping): which event each request fires, the
 * termination witness a /drain waits for, and the holds answered at the sequence's end.
 */
import type { HcConfig } from '../contract/hc-config';
import type { DrainBody, RefusedBody, StepBody } from '../contract/hc';
import type { SequenceCore } from './machine-core';
import type { SequenceTimers } from './machine-timers';
import { finishBy, isoTime } from './machine-view';
import { BOUND_MARGIN_MS, heldAfterCloseLb, sequenceBoundMs } from './sequence-context';
import { CLOSED, type HcEvent } from './states';
import type { Clock, ControlAnswer, HealthAnswer, Logger, MachineCounters } from './types';
import { Waiters, type WaitClosed } from './waiters';

export type DrainAnswer = ControlAnswer<DrainBody | RefusedBody>;
export type StepAnswer = ControlAnswer<StepBody | RefusedBody>;

export const NO_WITNESS_REASON = 'no pod termination witnessed (container restart?), not draining';

export type RequestConfig = Pick<HcConfig, 'terminationWitness' | 'lbBufferSeconds' | 'drainTimeoutSeconds'>;

export interface RequestHost {
  readonly clock: Clock;
  readonly log: Logger;
  /** The rate-limited log: displacements and bounds are a stranger's to cause as often as it likes. */
  readonly waiterLog: Logger;
  readonly counters: MachineCounters;
}

/** The manual steps of the control port, each the table's event of the same name. */
export type ManualStep = Extract<HcEvent, 'close-lb' | 'close' | 'reopen'>;

export class PortAnswers {
  private readonly waiters: Waiters;
  /** The hc container's own preStop (GET /hc-stopping), waiting like /wait-closed but witnessing nothing. */
  private readonly hcHooks: Waiters;
  private pendingDrains: ((answer: DrainAnswer) => void)[] = [];

  constructor(
    private readonly cfg: RequestConfig,
    private readonly core: SequenceCore,
    private readonly timers: SequenceTimers,
    private readonly host: RequestHost,
  ) {
    const state = () => this.core.state;
    this.waiters = new Waiters(host.clock, host.waiterLog, host.counters, state);
    this.hcHooks = new Waiters(host.clock, host.waiterLog, host.counters, state);
  }

  get waiterCount(): number {
    return this.waiters.size;
  }

  /**
   * POST /drain. Idempotent. With the termination witness required (and not overridden), the
   * sequence starts only if a /wait-closed request is waiting or arrives within the window.
   */
  requestDrain(options: { witness: boolean }): Promise<DrainAnswer> {
    if (!this.drainWouldStartSomething()) return Promise.resolve(this.drainAnswer(200, 'the sequence is already running'));
    const check = this.core.check('drain');
    if (!check.ok) return Promise.resolve(this.refuse('drain', check.reason));
    const witnessNeeded = options.witness && this.cfg.terminationWitness.required;
    if (!witnessNeeded) return Promise.resolve(this.startDrain(options.witness ? 'drain requested' : 'drain requested without a termination witness'));
    if (this.waiters.size > 0) return Promise.resolve(this.startDrain('drain requested, pod termination witnessed'));
    return new Promise((resolve) => {
      this.pendingDrains.push(resolve);
      if (!this.timers.witnessWindowOpen) {
        const windowSeconds = this.cfg.terminationWitness.windowSeconds;
        this.host.log('info', 'drain requested: waiting for the termination witness', { windowSeconds });
        this.timers.openWitnessWindow(windowSeconds, () => {
          this.host.log('warn', NO_WITNESS_REASON, { windowSeconds });
          this.resolvePendingDrains({ status: 200, json: { draining: false, state: this.core.state, reason: NO_WITNESS_REASON } });
        });
      }
    });
  }

  /** POST /close-lb, /close, /reopen: one event each. */
  step(event: ManualStep): StepAnswer {
    const result = this.core.fire(event, `${event} requested`);
    if (!result.ok) return this.refuse(event, result.reason);
    return { status: 200, json: { ok: true, state: this.core.state, changed: result.changed } };
  }

  /**
   * GET /wait-closed on the witness port (istio-proxy's preStop): resolves when the sequence has
   * finished, or with 504 at its bound (waiters.ts). Its only other effect is to witness a pod
   * termination for a pending /drain. `source` is the caller's address.
   */
  waitClosed(source = ''): WaitClosed {
    if (this.core.state === CLOSED) return { answer: Promise.resolve({ status: 200, body: CLOSED }), cancel: () => {} };
    const own = this.host.clock.now() + this.cfg.terminationWitness.windowSeconds * 1000 + sequenceBoundMs(this.cfg) + BOUND_MARGIN_MS;
    const wait = this.waiters.add(source, Math.max(own, this.finishBy() ?? 0));
    if (this.pendingDrains.length > 0) {
      this.timers.closeWitnessWindow();
      this.resolvePendingDrains(this.startDrain('drain requested, pod termination witnessed'));
    }
    return wait;
  }

  /**
   * GET /hc-stopping on the witness port: the hc container's preStop. Asks for the drain as POST
   * /drain does (so it starts only with the pod termination witnessed by /wait-closed) and answers
   * when the sequence has finished (200 CLOSED), at its bound (504), at once when nothing was
   * witnessed within the window (200: a restart of the hc alone must not drain the pod), or 503
   * when the drain was refused. `source` is the caller's address.
   */
  hcStopping(source = ''): WaitClosed {
    let cancelled = false;
    let inner: WaitClosed | undefined;
    const answer = this.requestDrain({ witness: true }).then((drain): Promise<HealthAnswer> | HealthAnswer => {
      const body = drain.json as { draining?: boolean; reason?: string };
      if (drain.status >= 400) return { status: 503, body: `${this.core.state}: ${body.reason ?? 'refused'}` };
      if (body.draining !== true) return { status: 200, body: `not draining: ${body.reason ?? ''}` };
      if (this.core.state === CLOSED || cancelled) return { status: 200, body: this.core.state };
      const deadline = Math.max(this.host.clock.now() + sequenceBoundMs(this.cfg) + BOUND_MARGIN_MS, this.finishBy() ?? 0);
      inner = this.hcHooks.add(source, deadline);
      return inner.answer;
    });
    return {
      answer,
      cancel: () => {
        cancelled = true;
        inner?.cancel();
      },
    };
  }

  /** Answers every hold on the sequence's end: 200 CLOSED, or `answer` (the sidecar stopping). */
  releaseHolds(answer?: HealthAnswer): void {
    this.waiters.releaseAll(answer);
    this.hcHooks.releaseAll(answer);
  }

  /** The sidecar is stopping: every hold and pending /drain answered with the state it stops in. */
  stop(): void {
    const state = this.core.state;
    this.releaseHolds({ status: 503, body: state });
    this.resolvePendingDrains({ status: 503, json: { draining: false, state, reason: 'the sidecar is stopping' } });
  }

  private finishBy(): number | null {
    return finishBy(this.core.context, this.cfg);
  }

  /** A /drain starts the sequence, or continues one that /close-lb holds; anything else is already running. */
  private drainWouldStartSomething(): boolean {
    const p = this.core.context;
    return p.flow === null || (heldAfterCloseLb(p) && p.state !== CLOSED);
  }

  private drainAnswer(status: number, reason: string): DrainAnswer {
    return { status, json: { draining: true, state: this.core.state, reason, finishBy: isoTime(this.finishBy()) } };
  }

  private startDrain(reason: string): DrainAnswer {
    const result = this.core.fire('drain', reason);
    return result.ok ? this.drainAnswer(202, reason) : this.refuse('drain', result.reason);
  }

  private refuse(event: HcEvent, reason: string): ControlAnswer<RefusedBody> {
    return { status: 409, json: { ok: false, draining: false, state: this.core.state, event, reason } };
  }

  private resolvePendingDrains(answer: DrainAnswer): void {
    const pending = this.pendingDrains;
    this.pendingDrains = [];
    for (const resolve of pending) resolve(answer);
  }
}
