import { SPEC_MAX_BYTES } from '../bounded-read';
import { parseGatewaySpec, type ResolvedSpec } from '../schema/parse-spec';
import { UsageError } from './args';
import { readInputFile } from './read-input';

/** Reads (at most SPEC_MAX_BYTES) and validates a spec file; every problem (a SpecError) names the file, line and field. */
export function loadSpecFile(path: string | undefined): ResolvedSpec {
  if (!path) throw new UsageError('missing the gateway spec file');
  return parseGatewaySpec(readInputFile(path, SPEC_MAX_BYTES), path);
}
