/**
 * Every message about a user's input is in gracegate's words: the spec schemas, the sidecar's config
 * and `lint --lb` are walked field by field (from their JSON Schema) with wrong values, and no
 * message may be one of zod's defaults ("Invalid input: expected int, received number" was what
 * `spec.replicas: 2.5` said).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { parseLbFlag } from '../../src/cli/lint-command';
import { GracegateError } from '../../src/core/errors';
import { hcConfigSchema } from '../../src/contract/hc-config';
import { readHcConfig } from '../../src/hc/config-file';
import { gatewaySpecSchema } from '../../src/schema/gateway-spec';
import { resolveGatewaySpec } from '../../src/schema/parse-spec';
import { resolveWorkloadSpec } from '../../src/schema/spec-kinds';
import { workloadSpecSchema } from '../../src/schema/workload-spec';
import { specInput } from '../support/spec-builder';
import { workloadInput } from '../support/workload-spec-builder';

/** zod's own wording (its English locale), which a user cannot act on. */
const ZOD_DEFAULT = /^(Invalid (input|option|string|number|discriminator|key|value|[A-Za-z0-9 ]+$)|Too (small|big)|Unrecognized key)/;

type Node = {
  type?: string | string[];
  properties?: Record<string, Node>;
  items?: Node;
  anyOf?: Node[];
  oneOf?: Node[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  minLength?: number;
  pattern?: string;
  additionalProperties?: Node | boolean;
};

type Path = (string | number)[];

/** Wrong values for one field, from what its schema node allows. */
function wrongValues(node: Node): unknown[] {
  const types = new Set([node.type ?? [], ...(node.anyOf ?? []).map((n) => n.type ?? [])].flat());
  const out: unknown[] = [];
  if (node.enum) out.push('not-one-of-them', 7);
  if (node.const !== undefined) out.push('not-the-constant');
  if (types.has('integer')) out.push(2.5);
  if (types.has('integer') || types.has('number')) {
    out.push('abc', true);
    for (const bound of [node.minimum, node.exclusiveMinimum]) if (bound !== undefined) out.push(bound - 1);
    for (const bound of [node.maximum, node.exclusiveMaximum]) if (bound !== undefined) out.push(bound + 1);
  }
  if (types.has('string') && !types.has('number')) out.push(12, ...(node.minLength ? [''] : []), ...(node.pattern ? ['!! no match !!'] : []));
  if (types.has('string') && types.has('number')) out.push(true, { a: 1 }, 'ten seconds');
  if (types.has('boolean')) out.push('yes');
  if (types.has('array')) out.push('not-a-list', ...(node.minItems ? [[]] : []));
  if (types.has('object')) out.push('not-a-mapping');
  return out;
}

/** Every (path, wrong value) of a schema, each discriminated union's variants included. */
function* mutations(node: Node | undefined, path: Path, seen = 0): Generator<{ path: Path; value: unknown; variant: Record<string, unknown> }> {
  if (!node || seen > 8) return;
  for (const value of wrongValues(node)) yield { path, value, variant: {} };
  for (const [key, child] of Object.entries(node.properties ?? {})) yield* mutations(child, [...path, key], seen + 1);
  if (node.items) yield* mutations(node.items, [...path, 0], seen + 1);
  if (typeof node.additionalProperties === 'object') yield* mutations(node.additionalProperties, [...path, 'someKey'], seen + 1);
  for (const variant of node.oneOf ?? node.anyOf ?? []) {
    const constants = Object.fromEntries(
      Object.entries(variant.properties ?? {})
        .filter(([, p]) => p.const !== undefined)
        .map(([k, p]) => [k, p.const]),
    );
    for (const m of mutations({ ...variant, anyOf: undefined, oneOf: undefined }, path, seen + 1)) {
      if (m.path.length > path.length) yield { ...m, variant: { ...constants, ...m.variant } };
    }
  }
}

/** `base` with `value` at `path` (parents created; a discriminated union's constants set beside it). */
function mutate(base: unknown, path: Path, value: unknown, variant: Record<string, unknown>, variantAt: number): unknown {
  const root = structuredClone(base) as Record<string | number, unknown>;
  let at: Record<string | number, unknown> = root;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!;
    if (typeof at[key] !== 'object' || at[key] === null) at[key] = typeof path[i + 1] === 'number' ? [] : {};
    at = at[key] as Record<string | number, unknown>;
    if (i === variantAt - 1) Object.assign(at, variant);
  }
  at[path[path.length - 1]!] = value;
  return root;
}

/** The messages a user sees for one wrong value (none when it happens to be accepted). */
function messagesOf(run: () => unknown): string[] {
  try {
    run();
    return [];
  } catch (err) {
    if (!(err instanceof GracegateError)) throw err;
    return err.problems.map((p) => p.message);
  }
}

function walk(what: string, schema: z.ZodType, base: unknown, run: (input: unknown) => unknown): void {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Node;
  const offenders: string[] = [];
  let cases = 0;
  let messages = 0;
  for (const m of mutations(json, [])) {
    // The variant's constants go into the object that holds the mutated field's union.
    const variantAt = Object.keys(m.variant).length > 0 ? m.path.length - 1 : -1;
    const found = messagesOf(() => run(mutate(base, m.path, m.value, m.variant, variantAt)));
    cases++;
    messages += found.length;
    for (const msg of found) if (ZOD_DEFAULT.test(msg)) offenders.push(`${m.path.join('.')} = ${JSON.stringify(m.value)}: ${msg}`);
  }
  assert.ok(cases > 50 && messages > cases / 2, `${what}: walked ${cases} wrong values, ${messages} messages`);
  assert.deepEqual([...new Set(offenders)], [], `${what}: zod's own wording reaches the user`);
}

describe("every message about a wrong value is in gracegate's words", () => {
  test('spec.replicas: 2.5 says it must be a whole number', () => {
    const msgs = messagesOf(() => resolveGatewaySpec(specInput({ spec: { replicas: 2.5 } })));
    assert.deepEqual(msgs, ['must be a whole number, got 2.5']);
  });

  test('GracefulGateway, every field', () => {
    walk('GracefulGateway', gatewaySpecSchema, specInput(), (input) => resolveGatewaySpec(input));
  });

  test('GracefulWorkload, every field', () => {
    walk('GracefulWorkload', workloadSpecSchema, workloadInput(), (input) => resolveWorkloadSpec(input));
  });

  test("the hc sidecar's config, every field", () => {
    walk('hc config', hcConfigSchema, {}, (input) => readHcConfig(undefined, input as Record<string, unknown>));
  });

  test('lint --lb, a field of each vendor', () => {
    for (const flag of [
      'haproxy,fall=2.5',
      'haproxy,inter=true',
      'citrix,retries=0',
      'f5,interval=abc',
      'nlb,targetType=pod',
      'envoy,unhealthyThreshold=-1',
      'nope',
    ]) {
      const msgs = messagesOf(() => parseLbFlag(flag)).flatMap((m) => m.split('\n'));
      assert.ok(msgs.length > 0, flag);
      for (const msg of msgs) assert.doesNotMatch(msg.replace(/^--lb [^:]+: /, ''), ZOD_DEFAULT, `${flag}: ${msg}`);
    }
  });
});
