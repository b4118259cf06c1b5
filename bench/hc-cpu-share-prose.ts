/**
 * docs/manifests.md's sentences around the CPU share tables (bench/hc-cpu-share-table.ts), rendered
 * from the same docs/bench/hc-cpu-share-results.json: the method (with the run's load), what the
 * earlier run kept beside it showed, and why the chosen request and limit, every figure quoted from
 * the results or their passes (issue 49, item 2: no figure copied by hand). test/pod/hc-cpu-docs.test.ts
 * holds the page to this rendering.
 */
import { type Candidate, type CpuShareResults, type CpuShareRow, milliCpu } from './hc-cpu-share-table';

export { blockIn } from './marker-block';

export const METHOD_BEGIN = '<!-- hc-cpu-share method: rendered from docs/bench/hc-cpu-share-results.json (bench/hc-cpu-share-prose.ts) -->';
export const METHOD_END = '<!-- end hc-cpu-share method -->';
export const READING_BEGIN = '<!-- hc-cpu-share reading: rendered from docs/bench/hc-cpu-share-results.json (bench/hc-cpu-share-prose.ts) -->';
export const READING_END = '<!-- end hc-cpu-share reading -->';

/** A row of the earlier run: the same figures, no storm phase. */
type EarlierRow = Omit<CpuShareRow, 'storm'>;

const r0 = (v: number): string => Math.round(v).toString();
const range = (xs: number[]): string => {
  const lo = r0(Math.min(...xs));
  const hi = r0(Math.max(...xs));
  return lo === hi ? lo : `${lo}-${hi}`;
};
const words = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
const count = (n: number): string => words[n] ?? String(n);
const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
const isChosen = (r: { request: string; limit: string | null }, c: Candidate): boolean => r.request === c.request && r.limit === c.limit;

function find<R extends { candidate: string }>(rows: readonly R[], candidate: string, where: string): R {
  const row = rows.find((r) => r.candidate === candidate);
  if (!row) throw new Error(`docs/bench/hc-cpu-share-results.json: ${where} has no '${candidate}'`);
  return row;
}

/** The paragraph before the tables: how the bench runs, from its recorded setup and load. */
export function cpuShareMethod(results: CpuShareResults): string {
  const s = results.setup;
  const cpus = /× (\d+)/.exec(results.machine)?.[1];
  const loops = cpus === undefined ? `${s.neighbour.busyLoops} busy loops` : `${count(s.neighbour.busyLoops / Number(cpus))} busy loops per core`;
  return [
    'The benchmark runs the real `gracegate hc` (against the Envoy stand-in, polling every',
    `${s.pollIntervalSeconds === 1 ? 'second' : `${s.pollIntervalSeconds} s`}) in a cgroup v1 \`cpu\` group with the shares and quota each candidate gives, from its start, beside a`,
    `sibling group of ${s.neighbour.shares} shares (a pod that requests one CPU) that holds, when it runs, ${loops};`,
    "both under a parent with the node's allocatable CPU as its shares, as kubepods has. The",
    `probes are an LB's: \`GET /health_check.html\` on a new connection each, ${s.ratePerSecond} a second, and one fails`,
    `when it is answered after ${s.lbTimeoutMs} ms (the test cluster's HAProxy, \`inter ${s.lbTimeoutMs}ms\`: its check timeout is`,
    `its inter) or not at all. Per candidate, one hc: its start-up (spawn to the first 200), ${s.probes} probes`,
    `with no neighbour, ${s.stormProbes} during a probe storm (${s.storm.connections} keep-alive probers in their own process, no`,
    `neighbour: the hc's own demand, where a limit bites), then ${s.probes} beside the neighbour. ${capital(count(results.rounds))} passes,`,
    "the candidates' order rotated from pass to pass; each figure the passes' median (failed probes and",
    "throttled periods summed), the ratio the median of each pass's contended p99 over the same hc's p99",
    `with no neighbour. The ${cpus === undefined ? '' : `${cpus}-core `}machine was shared with other sessions' tests: the load average went from ${r0(results.loadAverage.start)}`,
    `to ${r0(results.loadAverage.end)} during the run, noise common to the candidates of a pass, which is why the within-pass`,
    'ratio is given. Raw figures and every pass: `docs/bench/hc-cpu-share-results.json` (these',
    'sentences and the tables below are rendered from it: `node dist/bench/hc-cpu-share-docs-main.js`).',
    '',
  ].join('\n');
}

/** The paragraphs after the tables: the earlier run, the choice and why, and the limit to set where one is required. */
export function cpuShareReading(results: CpuShareResults, chosen: Candidate): string {
  const s = results.setup;
  const earlier = results.earlierRun;
  if (!earlier) throw new Error('docs/bench/hc-cpu-share-results.json: no earlierRun to read the tables with');
  const eRows = earlier.rows as EarlierRow[];
  const ePasses = earlier.passes as EarlierRow[][];
  const passes = results.passes;
  const chosenName = results.rows.find((r) => isChosen(r, chosen))?.candidate;
  if (!chosenName) throw new Error(`docs/bench/hc-cpu-share-results.json: no row for the chosen ${chosen.request} / ${chosen.limit ?? 'no limit'}`);
  const byRequest = [...results.rows].sort((a, b) => milliCpu(a.request) - milliCpu(b.request));
  const smallest = byRequest[0]!;
  const failing = eRows.filter((r) => r.contended.failed > 0);
  if (failing.length !== 1 || failing[0]!.candidate !== smallest.candidate)
    throw new Error(`earlierRun: the reading says only ${smallest.candidate} failed probes; failed: ${failing.map((r) => r.candidate).join(', ')}`);
  const fail = failing[0]!;
  // The next request up, with the same limit as the smallest: passed, but with what margin.
  const next = byRequest.find((r) => milliCpu(r.request) > milliCpu(smallest.request) && milliCpu(r.request) < milliCpu(chosen.request))!;
  const nextE = find(eRows, next.candidate, 'earlierRun');
  // The chosen request with the smallest limit measured: throttled beside the neighbour, and where.
  const limited = results.rows.filter((r) => r.request === chosen.request && r.limit !== null).sort((a, b) => milliCpu(a.limit!) - milliCpu(b.limit!));
  const low = limited[0]!;
  const high = limited[limited.length - 1]!;
  const lowThrottled = ePasses.flat().filter((r) => r.candidate === low.candidate && r.contended.throttledPeriods > 0);
  if (lowThrottled.length === 0) throw new Error(`earlierRun: ${low.candidate} was never throttled beside the neighbour`);
  const worst = lowThrottled.reduce((a, b) => (b.contended.max > a.contended.max ? b : a));
  const eLow = find(eRows, low.candidate, 'earlierRun');
  const unthrottled = (name: string) =>
    [...passes.flat(), ...ePasses.flat()].filter((r) => r.candidate === name).every((r) => r.contended.throttledPeriods === 0);
  const others = results.rows.filter((r) => r.limit === null || r.candidate === high.candidate).map((r) => r.candidate);
  if (!others.every(unthrottled)) throw new Error(`a run of ${others.join(', ')} was throttled beside the neighbour: the reading says none was`);
  const neverThrottled = limited.find((r) => unthrottled(r.candidate));
  // The chosen row in both runs.
  const now = find(results.rows, chosenName, 'rows');
  const then = find(eRows, chosenName, 'earlierRun');
  // What a limit cost: start-ups, the storm.
  const limitRows = (limit: string) => passes.flat().filter((r) => r.limit === limit);
  const lowStarts = limitRows(low.limit!).map((r) => r.startup.throttledPeriods);
  const highRuns = passes.flat().filter((r) => r.candidate === high.candidate);
  const highStarts = highRuns.filter((r) => r.startup.throttledPeriods > 0);
  const highStorms = highRuns.map((r) => r.storm);
  const highWorst = highStorms.reduce((a, b) => (b.throttledPeriods > a.throttledPeriods ? b : a));
  const worstPass = passes.findIndex((p) => p.some((r) => r.candidate === high.candidate && r.storm === highWorst));
  const unlimitedThen = find(passes[worstPass]!, chosenName, `pass ${worstPass}`).storm.cpuMsPerSecond;
  const periods = (results.rounds * s.stormProbes * 1000) / s.ratePerSecond / (s.cfsPeriodUs / 1000);
  const chosenStorms = passes
    .flat()
    .filter((r) => r.candidate === chosenName)
    .map((r) => r.storm.p99);
  const busiest = passes
    .flat()
    .filter((r) => r.limit === null)
    .reduce((a, b) => (b.storm.requestsPerSecond > a.storm.requestsPerSecond ? b : a));
  const thousands = (n: number) => `${(Math.round(n / 1000) * 1000).toLocaleString('en')}`;
  const core = (msPerSecond: number) => (msPerSecond / 1000).toFixed(1);
  const eMaxes = [now.contended.max, then.contended.max];
  return [
    "The first table is the request: beside the neighbour the hc's main thread waits for a CPU in",
    `proportion to how few shares it has (run-queue wait over the ${r0(s.probes / s.ratePerSecond)} s of probes), and at ${smallest.shares} shares the`,
    'probes wait with it. The second is the limit: the runs with no neighbour, where the hc could use',
    "more CPU than its quota (throttled ms are cpu.stat's `throttled_time`, counted on each CPU the",
    "group's threads wait on, so a second can hold more than 1000). Read with them the run of the same",
    `bench just before this one, kept in the results file (\`earlierRun\`: no storm phase, load average`,
    `${r0(earlier.loadAverage.start)} at its start and ${r0(earlier.loadAverage.end)} at its end): ${fail.candidate} failed ${fail.contended.failed} of ${fail.contended.sent} probes (p99 ${r0(fail.contended.p99)} ms, max`,
    `${(fail.contended.max / 1000).toFixed(1)} s), every other candidate none; ${next.request}'s p99 was ${r0(nextE.contended.p99)} ms; at ${low.candidate} the quota throttled the hc in`,
    `${count(lowThrottled.length)} contended run${lowThrottled.length === 1 ? '' : 's'} (${eLow.contended.throttledPeriods} periods, ${r0(eLow.contended.throttledMs)} ms), whose slowest probe took ${r0(worst.contended.max)} ms, ${r0(s.lbTimeoutMs - worst.contended.max)} ms inside the LB's timeout, while no run`,
    `without a limit or at ${high.limit} was throttled.`,
    '',
    `Chosen: **a request of ${chosen.request} and ${chosen.limit === null ? 'no CPU limit' : `a CPU limit of ${chosen.limit}`}.** ${chosen.request} is the smallest request under which no probe`,
    `failed in either run with a margin: with no limit its slowest probe took ${range(eMaxes)} ms of the ${s.lbTimeoutMs}`,
    `(${next.request} passed too, but with a p99 of ${range([next.contended.p99, nextE.contended.p99])} ms and probes up to ${r0(Math.max(next.contended.max, nextE.contended.max))} ms: no margin for a heavier`,
    'neighbour); it is what istio-proxy requests by default, and a gateway fleet has few pods. The limit',
    `is dropped because the numbers show it costing and not paying: ${low.limit} throttled ${Math.min(...lowStarts) > 0 ? 'every' : 'most'} start-up (${range(lowStarts)}`,
    `periods, the first 200 ${r0(low.startup.ms - now.startup.ms)} ms later than with no limit), ${low.storm.throttledPeriods} of about ${periods} periods of the storm (the`,
    `hc held at ${r0(low.storm.cpuMsPerSecond)} ms of CPU a second where it used ${r0(now.storm.cpuMsPerSecond)} unlimited, serving ${low.storm.requestsPerSecond * 2 < now.storm.requestsPerSecond ? 'less' : 'more'} than half the`,
    `requests), and the contended run above; ${high.limit} was still throttled at ${highStarts.length} of the ${highRuns.length} start-ups (${range(highStarts.map((r) => r.startup.throttledPeriods))}`,
    `period${Math.max(...highStarts.map((r) => r.startup.throttledPeriods)) === 1 ? '' : 's'} each; the table's median is ${high.startup.throttledPeriods}) and in the storm of every pass (${range(highStorms.map((t) => t.throttledPeriods))} periods; the most,`,
    `${highWorst.throttledPeriods} periods, ${r0(highWorst.throttledMsPerSecond)} ms a second, in the pass where the hc with no limit used ${core(unlimitedThen)} of a core).`,
    "Nothing in the probes' figures favours a limit: the differences between the",
    `${chosen.request} rows are within what the passes vary (the storm's p99 with no limit ranged from ${r0(Math.min(...chosenStorms))} to ${r0(Math.max(...chosenStorms))} ms from`,
    "pass to pass, with the machine's load). Without one the hc is still bounded: Node runs its",
    `JavaScript on one thread (${core(busiest.storm.cpuMsPerSecond)} of a core at ${thousands(busiest.storm.requestsPerSecond)} requests a second, the most measured), and under`,
    "contention the request's shares, not a quota, divide the CPU between it and istio-proxy.",
    '',
    "Where a namespace's ResourceQuota counts `limits.cpu`, a pod whose containers lack a CPU limit is",
    'refused, and a LimitRange with a default CPU limit gives its default to the hc: add a limit of at',
    `least ${neverThrottled?.limit ?? high.limit} there (post-render or your own patch), the smallest measured that was never throttled`,
    `beside the neighbour in either run, and keep the request at ${chosen.request}.`,
    '',
  ].join('\n');
}
