/** `gracegate simulate`'s text output: one row per order, the plan's own marked, and what every column counts. */
import { FATES, type Fate } from '../loss/model';
import type { StartPath } from '../loss/start-model';
import { SIMULATE_LIMITS, type SimulateReport } from './simulate';

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

const START_PATH_TITLES: Record<StartPath, string> = {
  'own-path': 'its own',
  'traffic-rules': "the traffic's rules",
  'pod-ip': "the pod's IP",
};

/** A table with its first column left-aligned (room for the plan's mark) and the others right-aligned. */
function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length + (i === 0 ? 2 : 0), ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line([`  ${head[0]}`, ...head.slice(1)]), ...rows.map(line)].join('\n');
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
  const i = r.inputs;
  const startHead = [
    'order',
    'probe path',
    'start hold',
    'window mean',
    'window p95',
    'sent',
    'lost mean',
    'unheld: window p95',
    'unheld: lost',
    'rollout lost',
  ];
  const startRows = r.orders.map((o) => [
    `${o.chosen ? '* ' : '  '}${o.order}`,
    START_PATH_TITLES[o.start.path],
    `${num(o.start.holdSeconds)} s`,
    `${num(o.start.windowMs.mean)} ms`,
    `${num(o.start.windowMs.p95)} ms`,
    num(o.start.sent),
    num(o.start.lost.mean),
    o.start.unheld ? `${num(o.start.unheld.windowMs.p95)} ms` : '-',
    o.start.unheld ? num(o.start.unheld.lost.mean) : '-',
    num(o.rolloutLost),
  ]);
  return [
    `gracegate simulate: ${r.gateway}, one pod terminating; ${trafficText(r)}; request lengths ${i.durations}`,
    `${i.runs} runs per order (random key ${i.randomKey})${i.runsFitted ? `, fewer than the default ${SIMULATE_LIMITS.runs.default}: at this traffic the simulator's budget of ${SIMULATE_LIMITS.workBudget.toLocaleString('en')} requests followed allows ${i.runs} (--runs sets it)` : ''}; the plan's timings: LB detection ${i.lbDetectSeconds} s, LB buffer ${i.lbBufferSeconds} s, drain timeout ${i.drainTimeoutSeconds} s; LB connect ${i.connectMs} ms`,
    '',
    'Expected requests lost per pod termination (mean and p95 over the runs), and the mean per cause:',
    '',
    table(head, rows),
    '',
    `The start half, per new pod: the window in which the LB has the new pod's node UP while the node still drops its traffic (kube-proxy's rule not yet leading to the pod), the requests the LB sent into it, and those lost (the LB's hold on a failed connect: ${i.lbRefused}); and a rollout of all ${i.pods} pods, each leaving once and replaced once:`,
    '',
    table(startHead, startRows),
    '',
    `* the plan's sequence (${r.sequence}): the least expected loss, by the same model in closed form (gracegate plan). Every order runs behind the same LB; gracegate's each with the timings the plan would give it, the baselines with the plan's.`,
    ...r.orders.map(
      (o) =>
        `  ${o.order}: ${o.title}${o.order === 'soft-drain' && !r.inputs.lbHasSoftSignal ? ' (this LB has no graceful signal configured: it reads the soft answer as a failure, and soft-drain runs as health-first)' : ''}`,
    ),
    ...FATES.map((f) => `  ${FATE_TITLES[f]}: ${FATE_MEANINGS[f]}${f === 'refused' ? ` (this LB: ${r.inputs.lbRefused})` : ''}`),
    '  to the pod: requests the LB gave the leaving pod during a run',
    "  probe path: how the LB's probe reaches a new pod: through the traffic's own rules or to the pod's IP (the window is 0 by construction), or by a path of its own (a hostPort, a health Service of its own), where the start hold covers kube-proxy's minSyncPeriod and the measured propagation",
    '  unheld: the same starts with no start hold, what the hold buys (a path of its own only)',
    '  rollout lost: pods x (lost mean per termination + lost mean per start)',
    'What the model includes and leaves out: docs/simulate.md.',
    '',
  ].join('\n');
}
