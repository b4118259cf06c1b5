import { InputTooLargeError, readBounded, SPEC_MAX_BYTES } from '../bounded-read';
import { parseGatewaySpec, SpecError, formatProblem, type ResolvedSpec } from '../spec/parse-spec';
import { InputError, UsageError } from './args';

/** Reads and validates a spec file; every problem becomes one line naming the file, line and field. */
export function loadSpecFile(path: string | undefined): ResolvedSpec {
  if (!path) throw new UsageError('missing the gateway spec file');
  let text: string;
  try {
    text = readBounded(path, SPEC_MAX_BYTES, path);
  } catch (err) {
    if (err instanceof InputTooLargeError) throw new InputError(err.message);
    throw new InputError(`${path}: cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return parseGatewaySpec(text, path);
  } catch (err) {
    if (err instanceof SpecError) throw new InputError(err.message, err.problems.map((p) => formatProblem(path, p)));
    throw err;
  }
}
