import { z } from 'zod';
import { gatewaySpecSchema } from '../spec/gateway-spec';
import { parseCommandArgs, runCommand } from './args';

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
  return runCommand(USAGE, async () => {
    const { values } = parseCommandArgs(args, { help: { type: 'boolean', short: 'h' } }, false);
    if (values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    process.stdout.write(`${JSON.stringify(specJsonSchema(), null, 2)}\n`);
    return 0;
  });
}
