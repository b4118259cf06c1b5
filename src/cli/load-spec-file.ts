import { SPEC_MAX_BYTES } from '../core/bounded-read';
import { SpecError, type ResolvedSpec } from '../schema/parse-spec';
import { parseAnySpec, type AnyResolvedSpec } from '../schema/spec-kinds';
import { UsageError } from './args';
import { readInputFile } from '../core/read-input';

/**
 * Reads (at most SPEC_MAX_BYTES) and validates a spec file of either kind, chosen by its `kind`;
 * every problem (a SpecError) names the file, line and field.
 */
export function loadAnySpecFile(path: string | undefined): AnyResolvedSpec {
  if (!path) throw new UsageError('missing the spec file');
  return parseAnySpec(readInputFile(path, SPEC_MAX_BYTES), path);
}

/** A spec file for the commands that only know gateways (lb-config); a workload is refused by name. */
export function loadSpecFile(path: string | undefined): ResolvedSpec {
  if (!path) throw new UsageError('missing the gateway spec file');
  const any = loadAnySpecFile(path);
  if (any.kind === 'GracefulGateway') return any.resolved;
  throw new SpecError(path, [
    { path: 'kind', message: `this command takes a GracefulGateway; a ${any.kind} is planned and delivered by plan, synth, post-render and argocd` },
  ]);
}
