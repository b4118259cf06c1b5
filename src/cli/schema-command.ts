import { z } from 'zod';
import { gatewaySpecSchema } from '../schema/gateway-spec';
import { runParsedCommand } from './args';

const USAGE = 'usage: gracegate schema\n\nPrints the JSON Schema (draft 2020-12) of the GracefulGateway spec, for editor completion.\n';

/** The spec's JSON Schema, derived from the same zod schema that validates it. */
export function specJsonSchema(): Record<string, unknown> {
  return {
    $id: 'https://gracegate.dev/schemas/v1alpha1/gracefulgateway.json',
    title: 'GracefulGateway',
    ...z.toJSONSchema(gatewaySpecSchema, { io: 'input', unrepresentable: 'any' }),
  };
}

export async function run(args: string[]): Promise<number> {
  return runParsedCommand(USAGE, args, {}, false, async () => {
    process.stdout.write(`${JSON.stringify(specJsonSchema(), null, 2)}\n`);
    return 0;
  });
}
