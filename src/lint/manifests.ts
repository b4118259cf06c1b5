import { CORE_SCHEMA, constructFromEvents, EVENT_ID, parseEvents, YAMLException, type Event } from 'js-yaml';
import { GracegateError } from '../core/errors';
import type { Path } from '../core/json';

/**
 * Rendered manifests read for linting: every object's value, and where each of its fields is, so a
 * finding can name the file and line of the field to change.
 *
 * Why js-yaml here and `yaml` in the post-renderer: the post-renderer writes documents back byte
 * for byte and needs `yaml`'s round-trip tree; lint only reads, and must read 10,000 objects in well
 * under 2 s. js-yaml's event stream does that about ten times faster (bench/lint-bench.ts) and keeps
 * each node's offset in the text, so a field's line is found on demand, only for the fields a
 * finding names.
 */

/** A stream that is not a list of Kubernetes objects; the message names the file and line. */
export class ManifestReadError extends GracegateError {}

/** Most aliases one document may use: rendered manifests use none, and an alias bomb is refused. */
const MAX_ALIASES = 100;

/** One file or stream of manifests, its text and its documents' events (for locating fields). */
export class ManifestSource {
  private lineStarts: number[] | undefined;

  constructor(
    /** The name findings use: the path as given, or `stdin` (or the name given for it). */
    readonly name: string,
    readonly text: string,
    private readonly events: Event[],
  ) {}

  /** 1-based line of a text offset. */
  lineAt(offset: number): number {
    if (!this.lineStarts) {
      const starts = [0];
      for (let i = this.text.indexOf('\n'); i >= 0; i = this.text.indexOf('\n', i + 1)) starts.push(i + 1);
      this.lineStarts = starts;
    }
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }

  /**
   * The line of `path` inside the document whose events start at `eventIndex`: the line of the
   * deepest part of the path that exists (a missing field is reported where it should go).
   */
  lineOf(eventIndex: number, path: Path): number {
    return this.lineAt(locate(this.events, this.text, eventIndex, path));
  }
}

/** One document of a source: its value and the index of its first event. */
export type ManifestDocument = {
  source: ManifestSource;
  /** 1-based position among the source's documents, for messages. */
  index: number;
  /** Index of the document's root node event. */
  rootEvent: number;
  value: unknown;
};

function offsetOf(e: Event): number {
  switch (e.type) {
    case EVENT_ID.MAPPING:
    case EVENT_ID.SEQUENCE:
      return e.start;
    case EVENT_ID.SCALAR:
      return e.anchorStart >= 0 ? Math.min(e.anchorStart, e.valueStart) : e.tagStart >= 0 ? Math.min(e.tagStart, e.valueStart) : e.valueStart;
    case EVENT_ID.ALIAS:
      return e.anchorStart;
    default:
      return -1;
  }
}

/** Index just past the node starting at `i` (a collection or a document runs to its matching POP). */
function skipNode(events: Event[], i: number): number {
  const e = events[i]!;
  if (e.type !== EVENT_ID.MAPPING && e.type !== EVENT_ID.SEQUENCE && e.type !== EVENT_ID.DOCUMENT) return i + 1;
  let depth = 0;
  for (let j = i; j < events.length; j++) {
    const t = events[j]!.type;
    if (t === EVENT_ID.MAPPING || t === EVENT_ID.SEQUENCE || t === EVENT_ID.DOCUMENT) depth++;
    else if (t === EVENT_ID.POP && --depth === 0) return j + 1;
  }
  return events.length;
}

function scalarText(events: Event[], i: number, text: string): string | undefined {
  const e = events[i]!;
  if (e.type !== EVENT_ID.SCALAR) return undefined;
  const raw = text.slice(e.valueStart, e.valueEnd);
  // Keys in manifests are plain or quoted words; strip the quotes of a quoted one.
  return /^(['"]).*\1$/s.test(raw) ? raw.slice(1, -1) : raw;
}

/** The offset of the deepest existing part of `path`, from the node at `at`. */
function locate(events: Event[], text: string, at: number, path: Path): number {
  let node = at;
  let best = offsetOf(events[node]!);
  for (const part of path) {
    const e = events[node]!;
    let found = -1;
    let keyOffset = -1;
    if (e.type === EVENT_ID.MAPPING && typeof part === 'string') {
      for (let i = node + 1; events[i] && events[i]!.type !== EVENT_ID.POP; ) {
        const valueAt = skipNode(events, i);
        if (scalarText(events, i, text) === part) {
          found = valueAt;
          keyOffset = offsetOf(events[i]!);
          break;
        }
        i = skipNode(events, valueAt);
      }
    } else if (e.type === EVENT_ID.SEQUENCE && typeof part === 'number') {
      let i = node + 1;
      for (let n = 0; events[i] && events[i]!.type !== EVENT_ID.POP; n++) {
        if (n === part) {
          found = i;
          keyOffset = offsetOf(events[i]!);
          break;
        }
        i = skipNode(events, i);
      }
    }
    if (found < 0) break;
    node = found;
    best = keyOffset;
  }
  return Math.max(0, best);
}

/**
 * Reads a stream of YAML documents (kubectl's and helm's output) into documents with their values.
 * Malformed YAML, a duplicate key or an alias bomb is a ManifestReadError naming `name` and the line.
 */
export function readManifests(text: string, name: string): ManifestDocument[] {
  let events: Event[];
  let values: unknown[];
  try {
    events = parseEvents(text, { filename: name });
    values = constructFromEvents(events, { source: text, schema: CORE_SCHEMA, maxAliases: MAX_ALIASES });
  } catch (err) {
    if (err instanceof YAMLException) {
      const line = err.mark ? err.mark.line + 1 : undefined;
      throw new ManifestReadError([{ ...(line !== undefined ? { line } : {}), message: `malformed YAML: ${err.reason}` }], name);
    }
    throw err;
  }
  const source = new ManifestSource(name, text, events);
  const docs: ManifestDocument[] = [];
  for (let i = 0, d = 0; i < events.length; d++) {
    // A DOCUMENT event, then its root node (absent for an empty document), then its POP.
    const root = events[i + 1] && events[i + 1]!.type !== EVENT_ID.POP ? i + 1 : -1;
    docs.push({ source, index: d + 1, rootEvent: root, value: values[d] });
    i = skipNode(events, i);
  }
  return docs;
}

/** The line of `path` in a document (its first line for an empty document). */
export function lineOfField(doc: ManifestDocument, path: Path): number {
  if (doc.rootEvent < 0) return 1;
  return doc.source.lineOf(doc.rootEvent, path);
}
