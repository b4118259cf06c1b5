import { readFileSync } from 'node:fs';
import { parseGatewaySpec, SpecError, formatProblem, type ResolvedSpec } from '../schema/parse-spec';
import { InputError, UsageError } from './args';

/** Reads and validates a spec file; every problem becomes one line naming the file, line and field. */
export function loadSpecFile(path: string | undefined): ResolvedSpec {
  if (!path) throw new UsageError('missing the gateway spec file');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new InputError(`${path}: cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return parseGatewaySpec(text, path);
  } catch (err) {
    if (err instanceof SpecError) throw new InputError(err.message, err.problems.map((p) => formatProblem(path, p)));
    throw err;
  }
}
