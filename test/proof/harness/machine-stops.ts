/**
 * The machine itself stopping under a run: a gap in the clients' in-flight sampler (every 50 ms, a
 * process doing nothing but asynchronous I/O) far longer than any load makes it. A virtual machine
 * paused for a snapshot does this: in the CI run of 2e13c84 (6 December) every request in flight
 * took 27.8 s and then ended at once in HAProxy's 504s and cut streams, the kernel's log reading
 * 'crng reseeded due to virtual machine fork' in the same minute. Nothing of the tool was at work
 * in that gap, so the requests in flight across it say nothing about the tool; every other request
 * of the run is still held to the plan.
 */

/**
 * A gap this long is the machine stopping, not load: the busiest side-by-side soak runs (load
 * average 44 on 2 cores) left the sampler late by well under a second, and a pause this long
 * outlasts every LB check timeout of the lab.
 */
export const MACHINE_STOP_MS = 5000;

/** A stop of the machine, as the sampler's clock saw it (the records' clock, Date.now()). */
export type MachineStop = { fromMs: number; toMs: number };

/** The gaps of at least `minGapMs` between consecutive sample times (in order). */
export function machineStops(sampleTimesMs: readonly number[], minGapMs = MACHINE_STOP_MS): MachineStop[] {
  const out: MachineStop[] = [];
  for (let i = 1; i < sampleTimesMs.length; i++) {
    const fromMs = sampleTimesMs[i - 1]!;
    const toMs = sampleTimesMs[i]!;
    if (toMs - fromMs >= minGapMs) out.push({ fromMs, toMs });
  }
  return out;
}

/** In flight from before a stop began until after it ended: its fate was the stop's. */
export function inFlightAcross(r: { startMs: number; endMs: number }, stops: readonly MachineStop[]): boolean {
  return stops.some((s) => r.startMs <= s.fromMs && r.endMs >= s.toMs);
}

/** One line for a run's log: each stop, relative to `t0`. */
export function describeStops(stops: readonly MachineStop[], t0: number): string {
  return stops.map((s) => `the machine stopped ${s.toMs - s.fromMs} ms (${s.fromMs - t0}..${s.toMs - t0} ms): no client sample in between`).join('; ');
}
