import { z } from 'zod';
import { gatewaySpecSchema } from '../schema/gateway-spec';
import { SPEC_KINDS, type SpecKind } from '../schema/spec-kinds';
import { workloadSpecSchema } from '../schema/workload-spec';
import { runParsedCommand, UsageError } from './args';

const USAGE = `usage: gracegate schema [--kind GracefulGateway|GracefulWorkload]

Prints the JSON Schema (draft 2020-12) of a spec kind (default GracefulGateway), for editor completion.
`;

const SCHEMAS: Record<SpecKind, z.ZodType> = { GracefulGateway: gatewaySpecSchema, GracefulWorkload: workloadSpecSchema };

/** A spec kind's JSON Schema, derived from the same zod schema that validates it. */
export function specJsonSchema(kind: SpecKind = 'GracefulGateway'): Record<string, unknown> {
  return {
    $id: `https://gracegate.dev/schemas/v1alpha1/${kind.toLowerCase()}.json`,
    title: kind,
    ...z.toJSONSchema(SCHEMAS[kind], { io: 'input', unrepresentable: 'any' }),
  };
}

export async function run(args: string[]): Promise<number> {
  return runParsedCommand(USAGE, args, { kind: { type: 'string', default: 'GracefulGateway' } }, false, async ({ values }) => {
    const kind = values.kind as string;
    if (!(SPEC_KINDS as readonly string[]).includes(kind)) throw new UsageError(`--kind must be one of ${SPEC_KINDS.join(', ')}, got '${kind}'`);
    process.stdout.write(`${JSON.stringify(specJsonSchema(kind as SpecKind), null, 2)}\n`);
    return 0;
  });
}
