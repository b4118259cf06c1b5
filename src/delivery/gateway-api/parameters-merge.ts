import { parse } from 'yaml';
import type { JsonObject, JsonValue } from '../../core/json';
import type { K8sObject } from '../../pod/k8s';
import type { PodChanges } from '../../pod/pod-changes';
import { GracegateError } from '../../core/errors';
import { yamlValue } from '../../core/yaml-input';
import { CLASS_DEFAULTS_LABEL, GATEWAY_API_KEYS, gatewayApiPatches, patchText, type GatewayApiKey } from './parameters';

/*
 * A Gateway names one parameters ConfigMap. A user who already has one (resources, a Service type,
 * labels) gives it to synth (`--parameters FILE`) and gets it back with gracegate's patches merged
 * in, instead of two ConfigMaps of which the Gateway can name only one. What istiod would refuse is
 * refused here first, with the field: a key outside the five it applies (`unsupported overlay`), and
 * a patch that changes the object's name, namespace, owners or any other identity field (`illegal
 * metadata change`); either way istiod deploys nothing for the Gateway.
 */

/** The user's parameters cannot be applied by istiod, or cannot be merged. */
export class GatewayParametersError extends GracegateError {}

/** The metadata istiod lets a patch change; anything else is an "illegal metadata change". */
const PATCHABLE_METADATA = new Set(['labels', 'annotations']);

/**
 * List fields whose items a strategic merge matches by a key (k8s.io/api patchMergeKey tags), the
 * ones a gateway patch meets: the rest are replaced whole.
 */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  env: 'name',
  ports: 'containerPort',
  imagePullSecrets: 'name',
  topologySpreadConstraints: 'topologyKey',
};

function isMap(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * One patch that does what applying `first` then `second` does, for patches without directives:
 * maps merge, `second` wins on a scalar (null included: it deletes), keyed lists merge item by
 * item, other lists are `second`'s.
 */
export function mergePatches(first: JsonValue, second: JsonValue, field = ''): JsonValue {
  if (isMap(first) && isMap(second)) {
    const out: JsonObject = structuredClone(first);
    for (const [k, v] of Object.entries(second)) out[k] = k in out ? mergePatches(out[k]!, v, k) : structuredClone(v);
    return out;
  }
  const key = MERGE_KEYS[field];
  if (key && Array.isArray(first) && Array.isArray(second)) {
    const out = first.map((item) => structuredClone(item));
    for (const item of second) {
      const at = isMap(item) ? out.findIndex((x) => isMap(x) && x[key] === item[key]) : -1;
      if (at >= 0) out[at] = mergePatches(out[at]!, item, '');
      else out.push(structuredClone(item));
    }
    return out;
  }
  return structuredClone(second);
}

function hasDirective(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(hasDirective);
  if (!isMap(v)) return false;
  return Object.entries(v).some(([k, x]) => k.startsWith('$') || hasDirective(x));
}

/** Reads and checks the user's ConfigMap, every problem at once. */
export function readUserParameters(text: string, source: string): K8sObject {
  const read = yamlValue(text);
  if ('problem' in read) throw new GatewayParametersError([{ line: read.problem.line ?? 1, message: `YAML: ${read.problem.message}` }], source);
  const doc = read.value;
  if (!isMap(doc) || doc.kind !== 'ConfigMap' || doc.apiVersion !== 'v1' || !isMap(doc.metadata) || typeof doc.metadata.name !== 'string') {
    throw new GatewayParametersError(
      'expected one ConfigMap (apiVersion v1, kind ConfigMap, metadata.name): the one the Gateway names in spec.infrastructure.parametersRef',
      source,
    );
  }
  const problems: Array<{ path: string; message: string }> = [];
  const data = isMap(doc.data) ? doc.data : {};
  if (doc.data !== undefined && !isMap(doc.data)) problems.push({ path: 'data', message: 'must be a map of keys to YAML patches' });
  for (const [key, value] of Object.entries(data)) {
    if (!(GATEWAY_API_KEYS as readonly string[]).includes(key)) {
      problems.push({
        path: `data.${key}`,
        message: `istiod refuses this key (unsupported overlay; supported: ${GATEWAY_API_KEYS.join(', ')}) and then deploys nothing for the Gateway`,
      });
      continue;
    }
    const read = typeof value === 'string' ? yamlValue(value) : { value: undefined };
    if ('problem' in read) {
      problems.push({
        path: `data.${key}`,
        message: `YAML${read.problem.line === undefined ? '' : ` (line ${read.problem.line} of the value)`}: ${read.problem.message}`,
      });
      continue;
    }
    const patch = read.value;
    if (!isMap(patch)) {
      problems.push({ path: `data.${key}`, message: 'must be a YAML map: a strategic merge patch of the object' });
      continue;
    }
    for (const field of Object.keys(isMap(patch.metadata) ? patch.metadata : {})) {
      if (!PATCHABLE_METADATA.has(field)) {
        problems.push({
          path: `data.${key}`,
          message: `sets metadata.${field}: istiod refuses any change to an object's name, namespace, owners or other identity fields (illegal metadata change) and deploys nothing for the Gateway; rename a Gateway's Deployment with its gateway.istio.io/name-override annotation instead`,
        });
      }
    }
    if (patch.metadata !== undefined && !isMap(patch.metadata)) problems.push({ path: `data.${key}`, message: 'metadata must be a map' });
    if (hasDirective(patch))
      problems.push({
        path: `data.${key}`,
        message:
          'uses a strategic merge directive ($patch, $setElementOrder, ...): gracegate cannot merge its patch with that; move these customizations to the class defaults, which istiod applies first',
      });
  }
  if (problems.length > 0) throw new GatewayParametersError(problems, source);
  return doc as K8sObject;
}

/** The user's ConfigMap must sit where istiod looks for it. */
function checkPlace(user: K8sObject, changes: PodChanges, source: string): void {
  const g = changes.gatewayApi!;
  const ns = user.metadata.namespace;
  if (ns !== undefined && ns !== g.parametersNamespace) {
    throw new GatewayParametersError(
      g.classDefaults
        ? `metadata.namespace: '${ns}', but istiod reads class defaults only in its own namespace, '${g.parametersNamespace}' (spec.chart.defaultsForClass.systemNamespace)`
        : `metadata.namespace: '${ns}', but a Gateway's parametersRef names a ConfigMap in the Gateway's own namespace, '${g.parametersNamespace}'`,
      source,
    );
  }
}

/**
 * The user's ConfigMap with gracegate's patches merged in: keys gracegate does not write are kept
 * as they are; a key both write is one patch doing the user's, then gracegate's. The name and
 * namespace stay the user's (the Gateway already names them); class defaults keep their label.
 */
export function mergeUserParameters(user: K8sObject, changes: PodChanges, source = 'parameters'): K8sObject {
  checkPlace(user, changes, source);
  const ours = gatewayApiPatches(changes);
  const data: Record<string, string> = { ...((user as { data?: Record<string, string> }).data ?? {}) };
  for (const [key, patch] of Object.entries(ours) as Array<[GatewayApiKey, JsonObject]>) {
    const theirs = data[key] !== undefined ? (parse(data[key]!) as JsonObject) : undefined;
    data[key] = patchText(theirs ? (mergePatches(theirs, patch) as JsonObject) : patch);
  }
  const g = changes.gatewayApi!;
  const labels = { ...(user.metadata.labels ?? {}), ...(g.classDefaults ? { [CLASS_DEFAULTS_LABEL]: g.className } : {}) };
  return {
    ...structuredClone(user),
    metadata: {
      ...structuredClone(user.metadata),
      namespace: user.metadata.namespace ?? g.parametersNamespace,
      ...(Object.keys(labels).length > 0 ? { labels } : {}),
    },
    data,
  };
}
