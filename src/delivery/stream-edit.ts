/**
 * Changing a rendered stream in place, for every path that post-renders (post-render, the Gateway
 * API gateway's Gateway, the Argo CD plugin through them): a document brought in line with an
 * object, its YAML edited so that every other byte stays; gracegate's own objects appended once.
 */
import { isDeepStrictEqual } from 'node:util';
import { GracegateError } from '../core/errors';
import type { K8sObject } from '../pod';
import { describeObject, documentText, objectId, sameObject, type ManifestDoc } from './manifest-stream';
import { syncDocument, syncDocumentAt } from './yaml-sync';

/** The input is a valid stream the pod changes cannot be put into; the message says what to change. */
export class PostRenderError extends GracegateError {}

/** The comment put above each appended object, so a reader of `helm template` output knows its origin. */
export const APPENDED_COMMENT = 'Source: gracegate post-render';

type Obj = Record<string, unknown>;

/**
 * The objects gracegate adds beside the target: the documents to append, after bringing up to date
 * any that an earlier run already left in the stream (so a second pass changes nothing).
 */
export function withObjects(docs: ManifestDoc[], extras: readonly K8sObject[]): string[] {
  const appended: string[] = [];
  for (const extra of extras) {
    const existing = docs.find((d) => d.object !== null && sameObject(objectId(d.object), objectId(extra)));
    if (!existing) appended.push(documentText(extra, APPENDED_COMMENT));
    else if (!isDeepStrictEqual(existing.object, extra)) edit(existing, extra as Obj);
  }
  return appended;
}

/**
 * Brings the entry's YAML in line with `next`; an item of a List changes in its List, which is then
 * re-serialised. A document with a `<<` merge key is refused: gracegate reads it merged, as kubectl
 * does, but writing the merged object back would silently drop the merge the author wrote.
 */
export function edit(d: ManifestDoc, next: Obj): void {
  const mergeLine = d.mergeKeyLine ?? d.inList?.list.mergeKeyLine;
  if (mergeLine !== undefined) {
    throw new PostRenderError(
      `${describeObject(d.object ?? next)} (document ${d.index}) uses a '<<' merge key (line ${mergeLine}): gracegate does not rewrite a document that holds one; write the merged keys out in the template`,
    );
  }
  if (d.inList ? syncDocumentAt(d.doc, ['items', d.inList.item], next) : syncDocument(d.doc, next)) {
    d.touched = true;
    if (d.inList) d.inList.list.touched = true;
    d.object = next;
  }
}
