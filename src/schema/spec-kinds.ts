import { gatewaySpecSchema, type GatewaySpec } from './gateway-spec';
import { notAMapping, readSpecDocument, SpecError, validateSpec, type Resolved } from './parse-spec';
import { workloadSpecSchema, type WorkloadSpec } from './workload-spec';

/**
 * The kinds of spec gracegate reads, all under one apiVersion: the document's `kind` says which
 * schema validates it, and the commands that take both (plan, synth, post-render) dispatch on it.
 */
export const SPEC_KINDS = ['GracefulGateway', 'GracefulWorkload'] as const;
export type SpecKind = (typeof SPEC_KINDS)[number];

export type ResolvedWorkloadSpec = Resolved<WorkloadSpec>;

/** A validated spec of either kind. */
export type AnyResolvedSpec = { kind: 'GracefulGateway'; resolved: Resolved<GatewaySpec> } | { kind: 'GracefulWorkload'; resolved: ResolvedWorkloadSpec };

function kindOf(input: unknown): unknown {
  return typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>).kind : undefined;
}

/** Validates a spec object of the kind it names (e.g. built in code). */
export function resolveAnySpec(input: unknown, source = 'spec'): AnyResolvedSpec {
  return dispatch(input, source, () => undefined);
}

/** Parses a spec file of either kind; a missing or unknown `kind` is a SpecError on line 1's `kind`. */
export function parseAnySpec(text: string, source: string): AnyResolvedSpec {
  const { input, lineAt } = readSpecDocument(text, source);
  return dispatch(input, source, lineAt);
}

function dispatch(input: unknown, source: string, lineAt: (path: PropertyKey[]) => number | undefined): AnyResolvedSpec {
  const shape = notAMapping(input);
  if (shape) throw new SpecError(source, [{ path: '', line: lineAt([]), message: shape }]);
  const kind = kindOf(input);
  if (kind === 'GracefulGateway') return { kind, resolved: validateSpec(gatewaySpecSchema, input, source, lineAt) };
  if (kind === 'GracefulWorkload') return { kind, resolved: validateSpec(workloadSpecSchema, input, source, lineAt) };
  const message = kind === undefined ? `required: one of ${SPEC_KINDS.join(', ')}` : `'${String(kind)}' is not one of ${SPEC_KINDS.join(', ')}`;
  throw new SpecError(source, [{ path: 'kind', line: lineAt(['kind']), message }]);
}

/** Parses and validates a GracefulWorkload YAML document. Throws SpecError listing every problem. */
export function parseWorkloadSpec(text: string, source = 'workload.yaml'): ResolvedWorkloadSpec {
  const { input, lineAt } = readSpecDocument(text, source);
  return validateSpec(workloadSpecSchema, input, source, lineAt);
}

/** Validates a GracefulWorkload spec object (e.g. built in a cdk8s app). */
export function resolveWorkloadSpec(input: unknown, source = 'spec'): ResolvedWorkloadSpec {
  return validateSpec(workloadSpecSchema, input, source, () => undefined);
}
