/**
 * `gracegate verify --pod-state`, the pure half: what a pod's `GET /state` answer holds for the
 * timeline, and its six events placed on the report's clock (ms after the termination command
 * started). pod-state-kubectl.ts reads the answers; this file knows nothing of kubectl.
 */
import { STATES, TERMINATION_EVENTS, terminationEvent, type EventId, type EventName, type Flow, type HcState } from '../contract/hc';
import { isObject } from '../core/json';

/** The fields of a `StateBody` the timeline uses, checked: the answer crossed kubectl and a socket. */
export type PodStateAnswer = {
  state: HcState;
  flow: Flow | null;
  events: Array<{ id: EventId; at: string | null; estimated: boolean; note?: string }>;
};

/** The last `/state` a pod answered, and when (epoch ms on this machine). */
export type PodStateSample = { answer: PodStateAnswer; answeredAt: number };

export type PodEventOnClock = {
  id: EventId;
  name: EventName;
  /** Ms after the termination command started (this machine's clock minus the pod's time); null: not happened. */
  atMs: number | null;
  note?: string;
};

export type PodStateReport = {
  pod: string;
  /** The last state the pod answered; null when it never answered. */
  state: HcState | null;
  /** Its sequence (or a manual step) had started: this pod was the one terminated. */
  terminated: boolean;
  /** When the last answer was read, ms after the termination command started; null: never. */
  answeredAtMs: number | null;
  events: PodEventOnClock[];
};

/** How the polling went, for the report. */
export type PodStatePolling = {
  namespace: string;
  selector: string;
  intervalMs: number;
  /** The interval while a pod's sequence is under way. */
  sequenceIntervalMs: number;
  /** kubectl exec calls made, and how many failed (a pod that has gone fails from then on). */
  polls: number;
  failures: number;
  lastError: string | null;
};

/** What the event times are measured with: said beside them in the text and the JSON. */
export const POD_STATE_CLOCK =
  "event times are the pods' clocks (their nodes'), time 0 is this machine's: a skew between the two clocks shifts every event by as much";

/** `-l` for the pods' labels. */
export function labelSelector(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** Parses `gracegate state`'s output; throws an Error saying what is wrong with it. */
export function parseStateAnswer(text: string): PodStateAnswer {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`not JSON: '${text.slice(0, 80)}'`);
  }
  if (!isObject(body) || !(STATES as readonly unknown[]).includes(body['state'])) throw new Error('no sidecar state in the answer');
  if (!Array.isArray(body['events'])) throw new Error('no events in the answer');
  const events: PodStateAnswer['events'] = [];
  for (const e of body['events'] as unknown[]) {
    if (!isObject(e) || !TERMINATION_EVENTS.some((t) => t.id === e['id'])) continue;
    const at = typeof e['at'] === 'string' && Number.isFinite(Date.parse(e['at'])) ? e['at'] : null;
    events.push({ id: e['id'] as EventId, at, estimated: e['estimated'] === true, ...(typeof e['note'] === 'string' ? { note: e['note'] } : {}) });
  }
  return { state: body['state'] as HcState, flow: typeof body['flow'] === 'string' ? (body['flow'] as Flow) : null, events };
}

/** A pod's last answer on the report's clock: `t0` is the termination command's start (epoch ms). */
export function placePodState(pod: string, last: PodStateSample | null, t0: number): PodStateReport {
  const events = TERMINATION_EVENTS.map((t): PodEventOnClock => {
    const e = last?.answer.events.find((x) => x.id === t.id);
    const notes = [
      ...(t.estimated ? ['estimated by the sidecar: when the LB is expected to act, not observed'] : []),
      ...(e?.note !== undefined ? [e.note] : []),
    ];
    return { id: t.id, name: t.name, atMs: e?.at ? Date.parse(e.at) - t0 : null, ...(notes.length > 0 ? { note: notes.join('; ') } : {}) };
  });
  const observed = events.some((e) => e.atMs !== null && !terminationEvent(e.id).estimated);
  return {
    pod,
    state: last?.answer.state ?? null,
    terminated: last !== null && (last.answer.flow !== null || observed),
    answeredAtMs: last === null ? null : last.answeredAt - t0,
    events,
  };
}
