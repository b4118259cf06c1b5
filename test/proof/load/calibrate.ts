/**
 * Finds the highest steady rate this machine drives through the load lab, at run time: the lab
 * (three pods, HAProxy) under the long-request load, the short-request rate stepped up until the
 * rate achieved falls short of the one asked, a request fails, or the short requests' p99 latency
 * breaks away from the first step's; the limit is the best rate achieved before that. Runs use a
 * fraction of it (headroom), and the report says what the machine's load was.
 */
import { loadavg } from 'node:os';
import type { LoadLab, LoadShape } from './run';

export type CalibrationStep = { target: number; achieved: number; failed: number; p99Ms: number; ok: boolean; why: string };
export type Calibration = {
  version: string;
  steps: CalibrationStep[];
  /** The best short-request rate achieved by a step that held. */
  limit: number;
  loadavgAtStart: number[];
  stepMs: number;
  cpus: number;
};

/**
 * A step fails when its achieved/target ratio falls below this share of the first step's: wrk's
 * pacing (a fixed pause between requests on each connection) delivers less than asked by the
 * requests' own latency, so the first, light step says what "keeping up" looks like here.
 */
export const ACHIEVED_SHARE = 0.85;
/** …or when its p99 is this many times the first step's (and above P99_FLOOR_MS). */
export const P99_BREAK_RATIO = 5;
export const P99_FLOOR_MS = 100;

export async function calibrate(
  lab: LoadLab,
  long: Pick<LoadShape, 'longConnections' | 'longMs'>,
  targets: number[],
  stepMs: number,
  cpus: number,
): Promise<Calibration> {
  const steps: CalibrationStep[] = [];
  const loadavgAtStart = loadavg().map((n) => Math.round(n * 100) / 100);
  let baseP99: number | undefined;
  let baseEfficiency: number | undefined;
  for (const [i, target] of targets.entries()) {
    const gens = lab.startLoad({ rate: target, ...long }, `cal-${i}`);
    const from = Date.now();
    await new Promise((r) => setTimeout(r, stepMs));
    const [short] = await Promise.all([gens.short.stop(), gens.long?.stop()]);
    const seconds = (Date.now() - from) / 1000;
    // The last second is left out: wrk abandons what is in flight when it stops.
    const counted = short.sent.filter((s) => !s.primer && s.atMs < from + stepMs - 1000);
    const answered = counted.filter((s) => {
      const a = short.answered.get(s.id);
      return a !== undefined && a.status >= 200 && a.status < 300;
    });
    const achieved = Math.round(short.summary ? short.summary.requests / (short.summary.durationUs / 1e6) : answered.length / seconds);
    const failed = counted.length - answered.length;
    const p99Ms = Math.round((short.summary?.latencyUs.p99 ?? 0) / 100) / 10;
    baseP99 ??= p99Ms;
    baseEfficiency ??= achieved / target;
    const why =
      failed > 0
        ? `${failed} requests failed`
        : achieved < ACHIEVED_SHARE * baseEfficiency * target
          ? `achieved ${achieved}/s of ${target}/s (first step: ${Math.round(baseEfficiency * 100)} % of its target)`
          : p99Ms > Math.max(P99_FLOOR_MS, P99_BREAK_RATIO * baseP99)
            ? `p99 ${p99Ms} ms, first step ${baseP99} ms`
            : 'held';
    steps.push({ target, achieved, failed, p99Ms, ok: why === 'held', why });
    if (why !== 'held') break;
  }
  const held = steps.filter((s) => s.ok);
  return { version: lab.version, steps, limit: held.length > 0 ? Math.max(...held.map((s) => s.achieved)) : 0, loadavgAtStart, stepMs, cpus };
}
