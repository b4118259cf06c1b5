import { LineCounter, isNode, type Document } from 'yaml';
import { z } from 'zod';
import { GracegateError, inputMessage, type Problem } from '../core/errors';
import { didYouMean } from './did-you-mean';
import { gatewaySpecSchema, type GatewaySpec } from './gateway-spec';
import { givenPaths } from './given-paths';
import { pathText } from '../core/json';
import { documentValue, parseYamlDocuments } from '../core/yaml-input';

/** A validated spec, and which of its fields the user wrote (the rest are defaults). */
export type ResolvedSpec = { spec: GatewaySpec; given: ReadonlySet<string> };

/** Validates a spec object (e.g. built in code by a cdk8s app); throws SpecError on problems. */
export function resolveGatewaySpec(input: unknown, source = 'spec'): ResolvedSpec {
  return validateSpec(gatewaySpecSchema, input, source, () => undefined);
}

/** A validated spec of any kind, and which of its fields the user wrote. */
export type Resolved<Spec> = { spec: Spec; given: ReadonlySet<string> };

/** Where a field path is in the source text (a YAML line), when known. */
export type LineAt = (path: PropertyKey[]) => number | undefined;

/** Validates `input` with a spec schema; throws SpecError with every problem, located by `lineAt`. */
export function validateSpec<S extends z.ZodType>(schema: S, input: unknown, source: string, lineAt: LineAt): Resolved<z.output<S>> {
  const result = schema.safeParse(input, { error: inputMessage, jitless: true });
  if (result.success) return { spec: result.data, given: givenPaths(input) };
  throw new SpecError(
    source,
    result.error.issues.flatMap((issue) => issueProblems(schema, issue, input, lineAt)),
  );
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

/** The variant of a discriminated union the input names (the one whose constant keys match it), or the node itself. */
function pick(node: JsonSchemaNode | undefined, input: unknown, at: ReadonlyArray<PropertyKey>): JsonSchemaNode | undefined {
  const variants = node?.oneOf ?? node?.anyOf;
  if (!variants) return node;
  return variants.find((v) => Object.entries(v.properties ?? {}).some(([key, p]) => p.const !== undefined && p.const === valueAt(input, [...at, key])));
}

/** The schema node at `path`, following the variant the input names at each union. */
function schemaNodeAt(schema: z.ZodType, input: unknown, path: ReadonlyArray<PropertyKey>): JsonSchemaNode | undefined {
  let node: JsonSchemaNode | undefined = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchemaNode;
  for (let i = 0; i < path.length && node; i++) node = pick(node, input, path.slice(0, i))?.properties?.[String(path[i])];
  return node;
}

/** The keys the schema allows at `path` (for a union such as the LB block: the keys of the variant the input names). */
function knownKeys(schema: z.ZodType, input: unknown, path: ReadonlyArray<PropertyKey>): string[] {
  return Object.keys(pick(schemaNodeAt(schema, input, path), input, path)?.properties ?? {});
}

/** The values a discriminated union's key may take (`spec.loadBalancer.model`: the LB models), in the schema's order. */
function discriminatorValues(schema: z.ZodType, input: unknown, path: ReadonlyArray<PropertyKey>): string[] {
  const union = schemaNodeAt(schema, input, path.slice(0, -1));
  const key = String(path[path.length - 1]);
  return (union?.oneOf ?? union?.anyOf ?? [])
    .map((v) => v.properties?.[key]?.const)
    .filter((c) => c !== undefined)
    .map(String);
}

function describeIssue(schema: z.ZodType, issue: z.core.$ZodIssue, input: unknown): string {
  const missing = valueAt(input, issue.path) === undefined;
  if (issue.code === 'invalid_union' && 'discriminator' in issue && issue.discriminator) {
    const models = discriminatorValues(schema, input, issue.path).join(', ');
    return missing ? `required: one of ${models}` : `'${String(valueAt(input, issue.path))}' is not one of ${models}`;
  }
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

function issueProblems(schema: z.ZodType, issue: z.core.$ZodIssue, input: unknown, lineAt: LineAt): SpecProblem[] {
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeys(schema, input, issue.path);
    return issue.keys.map((key) => {
      const removed = REMOVED_KEYS[pathText([...issue.path, key])];
      if (removed !== undefined) return { path: pathText([...issue.path, key]), line: lineAt([...issue.path, key]), message: removed };
      const near = didYouMean(key, known);
      return {
        path: pathText([...issue.path, key]),
        line: lineAt([...issue.path, key]),
        message: near ? `unknown key; did you mean '${near}'?` : 'unknown key',
      };
    });
  }
  return [{ path: pathText(issue.path), line: lineAt(issue.path), message: describeIssue(schema, issue, input) }];
}

/** One spec document read from YAML: its value, and the line of any field path in it. */
export type SpecDocument = { input: unknown; lineAt: LineAt };

/** What a spec is, for the messages about a file that is not one. */
const A_SPEC = 'a spec is one YAML mapping with apiVersion, kind, metadata and spec (examples/ has one per LB)';

/**
 * A spec document that is not a mapping (a list, a string) named for what it is, or undefined: its
 * `kind` would otherwise be reported "required".
 */
export function notAMapping(input: unknown): string | undefined {
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) return undefined;
  const what = Array.isArray(input)
    ? `a list (of ${input.length})`
    : input === null
      ? 'empty (null)'
      : `a ${typeof input} (${JSON.stringify(input).slice(0, 40)})`;
  return `the document is ${what}, not a mapping: ${A_SPEC}`;
}

/** Reads the one YAML document of a spec file (any kind). Throws SpecError on YAML problems. */
export function readSpecDocument(text: string, source: string): SpecDocument {
  const counter = new LineCounter();
  const parsed = parseYamlDocuments(text, counter);
  if ('problem' in parsed) throw new SpecError(source, [{ path: '', message: `YAML: ${parsed.problem.message}` }]);
  const real = parsed.docs.filter((d) => d.contents !== null);
  if (real.length === 0) {
    const what = text.trim() === '' ? 'the file is empty' : 'the file holds no YAML document (only comments or document markers)';
    throw new SpecError(source, [{ path: '', message: `${what}: ${A_SPEC}` }]);
  }
  if (real.length !== 1) {
    throw new SpecError(source, [
      { path: '', line: counter.linePos(real[1]!.range[0]).line, message: `expected exactly one YAML document, found ${real.length}: one spec per file` },
    ]);
  }
  const doc = real[0]!;
  if (doc.errors.length > 0) {
    throw new SpecError(
      source,
      doc.errors.map((e) => ({ path: '', line: counter.linePos(e.pos[0]).line, message: `YAML: ${e.message.split('\n')[0]}` })),
    );
  }
  const read = documentValue(doc, counter);
  if ('problem' in read) throw new SpecError(source, [{ path: '', line: read.problem.line ?? 1, message: `YAML: ${read.problem.message}` }]);
  const shape = notAMapping(read.value);
  if (shape) throw new SpecError(source, [{ path: '', line: lineOf(doc, counter, []) ?? 1, message: shape }]);
  return { input: read.value, lineAt: (path) => lineOf(doc, counter, path) };
}

/** Parses and validates a GracefulGateway YAML document. Throws SpecError listing every problem. */
export function parseGatewaySpec(text: string, source = 'gateway.yaml'): ResolvedSpec {
  const { input, lineAt } = readSpecDocument(text, source);
  return validateSpec(gatewaySpecSchema, input, source, lineAt);
}
