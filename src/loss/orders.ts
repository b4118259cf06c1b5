/**
 * The termination orders the model compares, each as the steps the leaving pod takes (times from
 * the sequence start): gracegate's three sequences (src/plan/timeline.ts), the source article's
 * order, and the naive baseline. The harness runs the same steps for real (docs/e2e/RESULTS.md).
 */
import { SEQUENCES } from '../contract/hc';
import type { PodControl } from './pod-control';

export const BASELINE_ORDERS = ['article-order', 'naive-503', 'naive-503-listeners-stopped'] as const;
export const ORDERS = [...SEQUENCES, ...BASELINE_ORDERS] as const;
export type TerminationOrder = (typeof ORDERS)[number];

export const ORDER_TITLES: Record<TerminationOrder, string> = {
  'soft-drain': 'soft signal, drain after the LB buffer, fail at zero',
  'health-first': 'fail health, drain after the LB buffer',
  'drain-first': 'drain (refuse new connects), fail health at zero, stop one LB buffer later',
  'article-order': "the source article's order: keep accepting, poll in-flight up to the drain timeout, then 503, stop after the LB buffer",
  'naive-503': '503 at once, graceful drain, proxy gone after terminationDrainDuration',
  'naive-503-listeners-stopped': '503 and refuse new connects at once, proxy gone after terminationDrainDuration',
};

/** Starts `order` on the pod at the current instant. */
export function podScript(order: TerminationOrder, pod: PodControl): void {
  const { lbBufferMs: B, terminationDrainDurationMs: tdd } = pod.inputs;
  switch (order) {
    case 'drain-first':
    case 'article-order':
      // Both drain first and fail health at zero: drain-first's drain refuses new connects, the
      // article's keeps accepting (drain_listeners?graceful&skip_exit).
      pod.drain(order === 'drain-first' ? 'close' : 'keep');
      return pod.waitZero(() => {
        pod.health('fail');
        // One LB buffer after the health failure (drain-first: CLOSED; the article: its stop), the
        // proxy gets SIGTERM and exits after terminationDrainDuration.
        pod.after(B + tdd, () => pod.exit());
      });
    case 'health-first':
      pod.health('fail');
      return pod.after(B, () => {
        pod.drain('close');
        pod.waitZero(() => pod.after(tdd, () => pod.exit()));
      });
    case 'soft-drain':
      pod.health('soft');
      return pod.after(B, () => {
        pod.drain('close');
        pod.waitZero(() => {
          pod.health('fail');
          pod.after(tdd, () => pod.exit());
        });
      });
    case 'naive-503':
    case 'naive-503-listeners-stopped':
      pod.health('fail');
      pod.drain(order === 'naive-503' ? 'keep' : 'close');
      return pod.after(tdd, () => pod.exit());
  }
}
