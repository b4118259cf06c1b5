import { LineCounter, parseAllDocuments, isNode, type Document } from 'yaml';
import type { z } from 'zod';
import { gatewaySpecSchema, type GatewaySpec } from './gateway-spec';
import { givenPaths } from './given-paths';

/** A validated spec, and which of its fields the user wrote (the rest are defaults). */
export type ResolvedSpec = { spec: GatewaySpec; given: ReadonlySet<string> };

/** Validates a spec object (e.g. built in code by a cdk8s app); throws SpecError on problems. */
export function resolveGatewaySpec(input: unknown, source = 'spec'): ResolvedSpec {
  const result = gatewaySpecSchema.safeParse(input);
  if (!result.success) throw new SpecError(source, result.error.issues.flatMap((issue) => issueProblems(issue, () => undefined)));
  return { spec: result.data, given: givenPaths(input) };
}

/** One problem in a spec file, located by field path and, where the YAML has it, line. */
export type SpecProblem = { path: string; line?: number; message: string };

/** Every problem of a spec at once, so a user fixes them in one pass. */
export class SpecError extends Error {
  constructor(readonly source: string, readonly problems: SpecProblem[]) {
    super(problems.map((p) => formatProblem(source, p)).join('\n'));
  }
}

export function formatProblem(source: string, p: SpecProblem): string {
  const where = p.line !== undefined ? `${source}:${p.line}` : source;
  return `${where}: ${p.path || '(document)'}: ${p.message}`;
}

function pathText(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((text, key) => (typeof key === 'number' ? `${text}[${key}]` : text ? `${text}.${String(key)}` : String(key)), '');
}

/** The line of the deepest YAML node that exists along `path` (a missing key points at its parent). */
function lineOf(doc: Document, counter: LineCounter, path: ReadonlyArray<PropertyKey>): number | undefined {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = doc.getIn(path.slice(0, depth) as unknown[], true);
    if (isNode(node) && node.range) return counter.linePos(node.range[0]).line;
  }
  return undefined;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
  if (issue.code === 'invalid_union' && 'discriminator' in issue && issue.discriminator) {
    return `${issue.message} (one of citrix, f5, nlb, haproxy, envoy)`;
  }
  return issue.message;
}

/** Aliases a document may expand: a billion-laughs document expands far more (the yaml library's guard). */
export const MAX_ALIAS_COUNT = 100;

/** Parses and validates a GracefulGateway YAML document. Throws SpecError listing every problem. */
export function parseGatewaySpec(text: string, source = 'gateway.yaml'): ResolvedSpec {
  const counter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: counter, prettyErrors: false });
  if (!Array.isArray(docs)) throw new SpecError(source, [{ path: '', message: 'empty file: expected one GracefulGateway document' }]);
  const real = docs.filter((d) => d.contents !== null);
  if (real.length !== 1) {
    throw new SpecError(source, [{ path: '', message: `expected exactly one YAML document, found ${real.length}` }]);
  }
  const doc = real[0]!;
  if (doc.errors.length > 0) {
    throw new SpecError(source, doc.errors.map((e) => ({ path: '', line: counter.linePos(e.pos[0]).line, message: `YAML: ${e.message.split('\n')[0]}` })));
  }
  let input: unknown;
  try {
    input = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    // The yaml library throws a ReferenceError for an alias bomb or an alias without its anchor.
    throw new SpecError(source, [{ path: '', line: 1, message: `YAML: ${(err as Error).message}` }]);
  }
  const result = gatewaySpecSchema.safeParse(input);
  if (result.success) return { spec: result.data, given: givenPaths(input) };
  throw new SpecError(source, result.error.issues.flatMap((issue) => issueProblems(issue, (path) => lineOf(doc, counter, path))));
}

function issueProblems(issue: z.core.$ZodIssue, lineAt: (path: PropertyKey[]) => number | undefined): SpecProblem[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({ path: pathText([...issue.path, key]), line: lineAt([...issue.path, key]), message: 'unknown key' }));
  }
  return [{ path: pathText(issue.path), line: lineAt(issue.path), message: describeIssue(issue) }];
}
