import { LineCounter, parseAllDocuments, isNode, type Document } from 'yaml';
import { z } from 'zod';
import { GracegateError, type Problem } from '../errors';
import { LB_MODELS } from '../lb/registry';
import { didYouMean } from './did-you-mean';
import { gatewaySpecSchema, type GatewaySpec } from './gateway-spec';
import { givenPaths } from './given-paths';

/** A validated spec, and which of its fields the user wrote (the rest are defaults). */
export type ResolvedSpec = { spec: GatewaySpec; given: ReadonlySet<string> };

/** Validates a spec object (e.g. built in code by a cdk8s app); throws SpecError on problems. */
export function resolveGatewaySpec(input: unknown, source = 'spec'): ResolvedSpec {
  const result = gatewaySpecSchema.safeParse(input);
  if (!result.success) throw new SpecError(source, result.error.issues.flatMap((issue) => issueProblems(issue, input, () => undefined)));
  return { spec: result.data, given: givenPaths(input) };
}

/** One problem in a spec file, located by field path and, where the YAML has it, line. */
export type SpecProblem = Problem & { path: string };

/** Every problem of a spec at once, so a user fixes them in one pass. */
export class SpecError extends GracegateError {
  declare readonly problems: SpecProblem[];

  constructor(source: string, problems: SpecProblem[]) {
    super(problems, source);
  }
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

function valueAt(input: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  return path.reduce<unknown>((v, key) => (typeof v === 'object' && v !== null ? (v as Record<PropertyKey, unknown>)[key] : undefined), input);
}

type JsonSchemaNode = { properties?: Record<string, JsonSchemaNode>; oneOf?: JsonSchemaNode[]; anyOf?: JsonSchemaNode[]; const?: unknown };

/** The keys the schema allows at `path` (for the LB block: the keys of the model the input names). */
function knownKeys(input: unknown, path: ReadonlyArray<PropertyKey>): string[] {
  let node: JsonSchemaNode | undefined = z.toJSONSchema(gatewaySpecSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchemaNode;
  const pick = (n: JsonSchemaNode | undefined, at: ReadonlyArray<PropertyKey>): JsonSchemaNode | undefined => {
    const variants = n?.oneOf ?? n?.anyOf;
    if (!variants) return n;
    const model = valueAt(input, [...at, 'model']);
    return variants.find((v) => v.properties?.['model']?.const === model);
  };
  for (let i = 0; i < path.length && node; i++) node = pick(node, path.slice(0, i))?.properties?.[String(path[i])];
  return Object.keys(pick(node, path)?.properties ?? {});
}

/** The types an issue expected: one for a plain field, each alternative's for a union (a duration: number or string). */
function expectedTypes(issue: z.core.$ZodIssue): string[] {
  if (issue.code === 'invalid_type') return [issue.expected];
  if (issue.code === 'invalid_union') return [...new Set(issue.errors.flat().flatMap(expectedTypes))];
  return [];
}

function describeIssue(issue: z.core.$ZodIssue, input: unknown): string {
  const missing = valueAt(input, issue.path) === undefined;
  if (issue.code === 'invalid_union' && 'discriminator' in issue && issue.discriminator) {
    const models = LB_MODELS.join(', ');
    return missing ? `required: one of ${models}` : `'${String(valueAt(input, issue.path))}' is not one of ${models}`;
  }
  if (missing && (issue.code === 'invalid_type' || issue.code === 'invalid_union')) return `required (${expectedTypes(issue).join(' or ')})`;
  return issue.message;
}

/**
 * Keys a former version of the spec had, and why they went: a spec that still sets one is told so
 * rather than just "unknown key".
 */
const REMOVED_KEYS: Readonly<Record<string, string>> = {
  'spec.envoy.hcmDrainTimeoutSeconds':
    "removed: no timing depends on it. Envoy's HCM drain_timeout closes no idle keep-alive connection on a drain (docs/envoy.md); delete the line",
};

function issueProblems(issue: z.core.$ZodIssue, input: unknown, lineAt: (path: PropertyKey[]) => number | undefined): SpecProblem[] {
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeys(input, issue.path);
    return issue.keys.map((key) => {
      const removed = REMOVED_KEYS[pathText([...issue.path, key])];
      if (removed !== undefined) return { path: pathText([...issue.path, key]), line: lineAt([...issue.path, key]), message: removed };
      const near = didYouMean(key, known);
      return { path: pathText([...issue.path, key]), line: lineAt([...issue.path, key]), message: near ? `unknown key; did you mean '${near}'?` : 'unknown key' };
    });
  }
  return [{ path: pathText(issue.path), line: lineAt(issue.path), message: describeIssue(issue, input) }];
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
  throw new SpecError(source, result.error.issues.flatMap((issue) => issueProblems(issue, input, (path) => lineOf(doc, counter, path))));
}
