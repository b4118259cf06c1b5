/**
 * The plan's timeline as a picture (`gracegate plan --format svg`, synth's plan.svg beside PLAN.md):
 * two clocks run during a termination, the pod's under Kubernetes (preStop, the drain, SIGTERM,
 * Envoy's exit, SIGKILL) and the LB's (probe failures, DOWN, the flush), one lane each, with the
 * six events, the sequence's waits with their numbers, and the places the plan's findings say
 * requests can still be lost. Everything drawn comes from the plan (timeline, timings, findings).
 */
import type { EventId } from '../contract/hc';
import { lossText } from '../plan/order-choice';
import type { Plan } from '../plan/plan-gateway';
import type { TimelineEntry } from '../plan/timeline';
import { el, svgDocument, type SvgNode } from './svg';
import { labelWidth, placeMarkLabels } from './svg-labels';
import { DRAIN_FIRST_LISTENER_CLOSE_RESET } from '../lb/haproxy/findings';

const W = 960;
const LEFT = 150;
const RIGHT = 40;
const ROW = 14;
const RACE = '#d32f2f';

/** Events the LB's clock owns: its probes fail [1], it marks DOWN [5], it flushes [6]. The rest happen in the pod. */
const LB_EVENTS: ReadonlySet<EventId> = new Set<EventId>([1, 5, 6]);

type Wait = { label: string; from: number; to: number };
type Race = { label: string; from: number; to: number };

const fmt = (s: number): string => `${Math.round(s * 100) / 100} s`;
const when = (e: TimelineEntry): string => `${e.bound === 'by' ? '≤ ' : ''}${fmt(e.atSeconds)}`;

function eventAt(plan: Plan, id: EventId): number | undefined {
  return plan.timeline.entries.find((e) => e.event === id)?.atSeconds;
}

/** The sequence's waits, each between two of its moments, named with the timing that sets it. */
function waitsOf(plan: Plan): Wait[] {
  const t = plan.timings;
  const e = (id: EventId): number => eventAt(plan, id) ?? 0;
  const sigterm = plan.timeline.entries.find((x) => x.name.startsWith('preStop hooks end'))?.atSeconds ?? t.sequenceSeconds;
  const waits: Wait[] = [
    { label: `LB detection ${fmt(t.lbDetectSeconds)} (lbDetectSeconds): the failing probes before DOWN [5]`, from: e(5) - t.lbDetectSeconds, to: e(5) },
    { label: `drain timeout ${fmt(t.drainTimeoutSeconds)} (drainTimeoutSeconds): [3] to [4] at the latest`, from: e(3), to: e(3) + t.drainTimeoutSeconds },
    {
      label: `Envoy's exit ${fmt(t.terminationDrainDurationSeconds)} after SIGTERM (terminationDrainDurationSeconds)`,
      from: sigterm,
      to: sigterm + t.terminationDrainDurationSeconds,
    },
    { label: `grace period ${fmt(t.terminationGracePeriodSeconds)} (terminationGracePeriodSeconds): SIGKILL`, from: 0, to: t.terminationGracePeriodSeconds },
  ];
  // The LB buffer: health-first and soft-drain wait it between [1] and the drain [3]; drain-first between [1] and readiness [2].
  if (plan.sequence === 'drain-first')
    waits.splice(1, 0, { label: `LB buffer ${fmt(t.lbBufferSeconds)} (lbBufferSeconds): [1] to [2]`, from: e(1), to: e(1) + t.lbBufferSeconds });
  else waits.splice(1, 0, { label: `LB buffer ${fmt(t.lbBufferSeconds)} (lbBufferSeconds): [1] to the drain [3]`, from: e(1), to: e(1) + t.lbBufferSeconds });
  return waits;
}

/** Where the plan's findings say requests can still be lost, on the timeline (a point is a zero-length span). */
function racesOf(plan: Plan): Race[] {
  const races: Race[] = [];
  const down = eventAt(plan, 5) ?? 0;
  const drain = eventAt(plan, 3) ?? 0;
  const zero = eventAt(plan, 4) ?? drain;
  for (const f of plan.findings) {
    // The listener close at the drain resets a connect completing in the backlog: at [3], not over the drain.
    if (f.id === DRAIN_FIRST_LISTENER_CLOSE_RESET.id) {
      races.push({ label: `race at the drain [3]: ${f.id} (a connect reset by the listener close)`, from: drain, to: drain });
      continue;
    }
    switch (f.expectedLoss) {
      case 'cut-connects-at-down':
      case 'reused-connection-cut-at-down':
      case 'reset-sessions':
        races.push({ label: `race at DOWN [5]: ${f.id} (${f.expectedLoss})`, from: down, to: down });
        break;
      case 'refused-connections':
        races.push({
          label: `race from the drain [3] to DOWN [5]: ${f.id} (connects refused while the LB still sends)`,
          from: Math.min(drain, down),
          to: Math.max(drain, down),
        });
        break;
      case 'keepalive-race':
        races.push({ label: `race while draining [3] to [4]: ${f.id} (keep-alive reuse)`, from: drain, to: zero });
        break;
      default:
        break;
    }
  }
  return races;
}

/** Roughly the width of `text` at font-size 11. */
const textWidth = (text: string): number => labelWidth(text);

/**
 * Where a label goes beside a mark from x1 to x2: after it when it fits, else before it, else on a
 * line of its own below (`below`: the caller leaves a row for it).
 */
function placeLabel(x1: number, x2: number, text: string): { x: number; anchor: 'start' | 'end'; below: boolean } {
  if (x2 + 4 + textWidth(text) <= W - 4) return { x: x2 + 4, anchor: 'start', below: false };
  if (x1 - 4 - textWidth(text) >= LEFT) return { x: x1 - 4, anchor: 'end', below: false };
  return { x: Math.max(4, Math.min(x1, W - 4 - textWidth(text))), anchor: 'start', below: true };
}

export function renderPlanSvg(plan: Plan): string {
  const entries = [...plan.timeline.entries].sort((a, b) => a.atSeconds - b.atSeconds);
  const waits = waitsOf(plan);
  const races = racesOf(plan);
  const end = Math.max(plan.timings.terminationGracePeriodSeconds, ...entries.map((e) => e.atSeconds), ...waits.map((w) => w.to)) * 1.04;
  const plotW = W - LEFT - RIGHT;
  const x = (s: number): number => LEFT + (s / end) * plotW;
  // [6] on an LB that keeps sessions is a non-event: say so on the picture, not only in the tooltip.
  const none = (e: TimelineEntry): string => (e.event === 6 && !plan.loadBalancer.cutsSessionsOnDown ? ' (none: the LB keeps sessions)' : '');
  const label = (e: TimelineEntry): string => `${e.event ? `[${e.event}] ` : ''}${e.name} ${when(e)}${none(e)}`;

  const nodes: SvgNode[] = [];
  let y = 24;
  nodes.push(
    el(
      'text',
      { x: 10, y, 'font-size': 14, 'font-weight': 'bold' },
      `${plan.gateway.namespace}/${plan.gateway.name}: ${plan.sequence}, ${plan.timeline.lossless ? 'lossless' : 'not lossless'}`,
    ),
  );
  y += 16;
  nodes.push(
    el(
      'text',
      { x: 10, y },
      `Seconds after the preStop hooks start; ≤ means no later than (depends on traffic). LB: ${plan.loadBalancer.model}, on DOWN ${plan.loadBalancer.cutsSessionsOnDown ? 'flushes sessions' : 'keeps sessions'}.`,
    ),
  );
  y += 16;
  // Each order's expected loss: why this order (docs/simulate.md).
  nodes.push(
    el(
      'text',
      { x: 10, y },
      `Expected requests lost per pod termination at ${plan.traffic.requestsPerSecondPerPod} requests/s per pod: ${plan.orders
        .map((o) => `${o.order === plan.sequence ? '▶ ' : ''}${o.order} ${o.runnable ? lossText(o.expected) : 'not runnable'}`)
        .join(', ')}.`,
      el('title', {}, plan.sequenceReason),
    ),
  );
  y += 20;

  // Each event's line runs from the lane's top to its own label, and no label sits over a line
  // that reaches its row (src/emit/svg-labels.ts): the labels stay inside the lane's frame.
  const lane = (title: string, items: TimelineEntry[]): void => {
    const placed = placeMarkLabels(
      items.map((e) => ({ x: x(e.atSeconds), label: label(e) })),
      'up',
      W - RIGHT - 4,
      11,
      LEFT + 4,
    );
    const rows = placed.map((p) => p.row);
    const height = Math.max(3, Math.max(0, ...rows) + 2) * ROW + 10;
    nodes.push(el('rect', { x: LEFT, y, width: plotW, height, fill: '#f5f5f5', stroke: '#bbb' }));
    nodes.push(el('text', { x: 10, y: y + 16, 'font-weight': 'bold' }, title));
    items.forEach((e, i) => {
      const ex = x(e.atSeconds);
      const { anchor, row, text } = placed[i]!;
      const colour = e.event ? '#1565c0' : '#424242';
      const baseline = y + 14 + row * ROW;
      nodes.push(
        el('line', {
          x1: ex,
          y1: y,
          x2: ex,
          y2: baseline - 4,
          stroke: colour,
          'stroke-width': e.event ? 2 : 1,
          'stroke-dasharray': e.bound === 'by' ? '4 2' : undefined,
        }),
      );
      nodes.push(
        el(
          'text',
          { x: anchor === 'end' ? ex - 3 : ex + 3, y: baseline, fill: colour, 'text-anchor': anchor === 'end' ? 'end' : undefined },
          text,
          el('title', {}, text === label(e) ? e.note : `${label(e)}: ${e.note}`),
        ),
      );
    });
    y += height + 8;
  };
  lane(
    'Kubernetes / pod',
    entries.filter((e) => e.event === undefined || !LB_EVENTS.has(e.event)),
  );
  lane(
    'Load balancer',
    entries.filter((e) => e.event !== undefined && LB_EVENTS.has(e.event)),
  );

  // The races, over both lanes' time axis.
  for (const r of races) {
    const x1 = x(r.from) - (r.to === r.from ? 2 : 0);
    const w = Math.max(4, x(r.to) - x(r.from));
    nodes.push(el('rect', { x: x1, y, width: w, height: 10, fill: RACE, 'fill-opacity': 0.8 }, el('title', {}, r.label)));
    const at = placeLabel(x1, x1 + w, r.label);
    if (at.below) y += ROW;
    nodes.push(el('text', { x: at.x, y: y + 9, fill: RACE, 'text-anchor': at.anchor === 'end' ? 'end' : undefined }, r.label));
    y += ROW;
  }
  if (races.length === 0) {
    nodes.push(el('text', { x: LEFT, y: y + 9, fill: '#2e7d32' }, "no race: the plan's findings predict no loss for this LB"));
    y += ROW;
  }
  y += 6;

  // The axis.
  nodes.push(el('line', { x1: LEFT, y1: y, x2: W - RIGHT, y2: y, stroke: '#333' }));
  const step = end > 60 ? 10 : end > 20 ? 5 : end > 8 ? 2 : 1;
  for (let s = 0; s <= end; s += step) {
    nodes.push(el('line', { x1: x(s), y1: y, x2: x(s), y2: y + 4, stroke: '#333' }));
    nodes.push(el('text', { x: x(s), y: y + 15, 'text-anchor': 'middle' }, `${s}`));
  }
  nodes.push(el('text', { x: W - RIGHT, y: y + 28, 'text-anchor': 'end' }, 'seconds'));
  y += 36;

  // The waits, each a bar with its number and the timing that sets it.
  nodes.push(el('text', { x: 10, y: y + 9, 'font-weight': 'bold' }, 'Waits'));
  for (const w of waits) {
    const x1 = x(w.from);
    const x2 = x1 + Math.max(2, x(w.to) - x1);
    nodes.push(el('rect', { x: x1, y, width: x2 - x1, height: 8, fill: '#90a4ae' }));
    const at = placeLabel(x1, x2, w.label);
    if (at.below) y += ROW;
    nodes.push(el('text', { x: at.x, y: y + 8, 'text-anchor': at.anchor === 'end' ? 'end' : undefined }, w.label));
    y += ROW;
  }
  y += 10;
  return svgDocument(W, y, `Termination plan ${plan.gateway.namespace}/${plan.gateway.name}: ${plan.sequence}`, nodes);
}
