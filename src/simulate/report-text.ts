/** `gracegate simulate`'s text output: one row per order, the plan's own marked, and what every column counts. */
import { FATES, type Fate } from '../loss/model';
import type { SimulateReport } from './simulate';

export const FATE_TITLES: Record<Fate, string> = {
  refused: 'refused',
  cutAtDown: 'cut at DOWN',
  cutAtExit: 'cut at exit',
  keepAliveRace: 'keep-alive race',
  redispatched: 'redispatched',
};

export const FATE_MEANINGS: Record<Fate, string> = {
  refused: 'the pod refused the connect and the LB did not send it elsewhere',
  cutAtDown: 'in flight (or still connecting) when the LB marked the pod DOWN and flushed its sessions',
  cutAtExit: 'still in flight when the proxy exited (drain timeout, or a proxy stopped before the LB stopped sending)',
  keepAliveRace: 'reached the pod as it closed the connection (a connect in the listen backlog at the listener close) and got no answer',
  redispatched: 'refused, or met the race, and was sent to another pod by the LB: not lost',
};

const num = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(2));

function trafficText(r: SimulateReport): string {
  const t = r.inputs.traffic;
  return t.kind === 'poisson'
    ? `Poisson arrivals at ${t.rps} requests/s over ${r.inputs.pods} pods`
    : `${t.workers} closed-loop clients over ${r.inputs.pods} pods`;
}

export function renderSimulateText(r: SimulateReport): string {
  const head = ['order', 'lost mean', 'lost p95', ...FATES.map((f) => FATE_TITLES[f]), 'to the pod'];
  const rows = r.orders.map((o) => [
    `${o.chosen ? '* ' : '  '}${o.order}`,
    num(o.lost.mean),
    num(o.lost.p95),
    ...FATES.map((f) => num(o.byFate[f])),
    num(o.toPod),
  ]);
  const widths = head.map((h, i) => Math.max(h.length + (i === 0 ? 2 : 0), ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  const i = r.inputs;
  return [
    `gracegate simulate: ${r.gateway}, one pod terminating; ${trafficText(r)}; request lengths ${i.durations}`,
    `${i.runs} runs per order (random key ${i.randomKey}); the plan's timings: LB detection ${i.lbDetectSeconds} s, LB buffer ${i.lbBufferSeconds} s, drain timeout ${i.drainTimeoutSeconds} s; LB connect ${i.connectMs} ms`,
    '',
    'Expected requests lost per pod termination (mean and p95 over the runs), and the mean per cause:',
    '',
    line([`  ${head[0]}`, ...head.slice(1)]),
    ...rows.map(line),
    '',
    `* the plan's sequence (${r.sequence}): the least expected loss, by the same model in closed form (gracegate plan). Every order runs behind the same LB; gracegate's each with the timings the plan would give it, the baselines with the plan's.`,
    ...r.orders.map(
      (o) =>
        `  ${o.order}: ${o.title}${o.order === 'soft-drain' && !r.inputs.lbHasSoftSignal ? ' (this LB has no graceful signal configured: it reads the soft answer as a failure, and soft-drain runs as health-first)' : ''}`,
    ),
    ...FATES.map((f) => `  ${FATE_TITLES[f]}: ${FATE_MEANINGS[f]}${f === 'refused' ? ` (this LB: ${r.inputs.lbRefused})` : ''}`),
    '  to the pod: requests the LB gave the leaving pod during a run',
    'What the model includes and leaves out: docs/simulate.md.',
    '',
  ].join('\n');
}
