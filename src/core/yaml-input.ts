/**
 * The one way a YAML document a user wrote (a spec, a rendered manifest, a ConfigMap) becomes a
 * JSON value. The yaml library alone would let two things through to the user as its own words:
 * an alias bomb (a ReferenceError) and a key that is itself a list or a map (`? [a, b]`), which it
 * turns into the string "[ a, b ]" with a Node.js process warning ("Keys with collection values will
 * be stringified…") printed on stderr. Both become a problem naming the line here.
 */
import { isCollection, isPair, LineCounter, parseAllDocuments, visit, type Document } from 'yaml';
import type { Problem } from './errors';

/** Aliases a document may expand: a billion-laughs document expands far more (the yaml library's guard). */
export const MAX_ALIAS_COUNT = 100;

/** Where a key that is a list or a map starts, or undefined when every key is a scalar. */
function collectionKey(doc: Document): number | undefined {
  let at: number | undefined;
  visit(doc, {
    Pair(_, pair) {
      if (isPair(pair) && isCollection(pair.key)) {
        at = pair.key.range?.[0] ?? 0;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return at;
}

/**
 * The JSON value of a parsed document, or the problem that keeps it from having one: its line (none
 * when it is about the whole document) and words without a "YAML:" of their own.
 */
export function documentValue(doc: Document, counter: LineCounter): { value: unknown } | { problem: Problem } {
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    return { problem: { line: counter.linePos(e.pos[0]).line, message: e.message.split('\n')[0]! } };
  }
  const key = collectionKey(doc);
  if (key !== undefined) {
    return {
      problem: {
        line: counter.linePos(key).line,
        message: 'a key that is a list or a map (`? [a, b]`, `? {a: 1}`): gracegate reads keys as text only; write the key as a plain string',
      },
    };
  }
  try {
    return { value: doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) };
  } catch (err) {
    // The yaml library throws a ReferenceError for an alias bomb or an alias without its anchor:
    // about the document as a whole, no line of its own.
    return { problem: { message: (err as Error).message } };
  }
}

/** A whole text of one YAML document (no `---` stream): its value, or the problem with its line. */
export function yamlValue(text: string): { value: unknown } | { problem: Problem } {
  const counter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: counter, prettyErrors: false });
  const list = Array.isArray(docs) ? docs : [];
  if (list.length > 1) return { problem: { line: counter.linePos(list[1]!.range[0]).line, message: 'expected one document, found more than one' } };
  if (list.length === 0) return { value: null };
  return documentValue(list[0]!, counter);
}
