import { describeObject, type ManifestDoc } from './manifest-stream';
import { GracegateError } from '../core/errors';

/**
 * Which Deployment in a rendered stream is the gateway. A rule is a value, not a flag soup:
 * by name, by labels, or (the default) by having the proxy container.
 */
export type TargetRule = { by: 'name'; name: string } | { by: 'labels'; labels: Record<string, string> } | { by: 'container'; container: string };

export const TargetRule = {
  name: (name: string): TargetRule => ({ by: 'name', name }),
  labels: (labels: Record<string, string>): TargetRule => ({ by: 'labels', labels }),
  /** The default: the Deployment running the proxy container (`spec.envoy.containerName`, istio-proxy). */
  container: (container: string): TargetRule => ({ by: 'container', container }),
};

/** A rule that matches no Deployment, or matches several. */
export class TargetError extends GracegateError {}

export function describeRule(rule: TargetRule): string {
  switch (rule.by) {
    case 'name':
      return `--target-name ${rule.name}`;
    case 'labels':
      return `--target-selector ${Object.entries(rule.labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(',')}`;
    case 'container':
      return `a container named '${rule.container}' (the default; choose with --target-name or --target-selector)`;
  }
}

/** `app=igw,istio=igw` → labels. Equality only: set-based selectors would not name one Deployment. */
export function parseLabelSelector(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const part of text.split(',')) {
    const m = /^\s*([A-Za-z0-9][-A-Za-z0-9_./]*)\s*==?\s*([-A-Za-z0-9_.]*)\s*$/.exec(part);
    if (!m) throw new TargetError(`--target-selector '${text}': '${part}' is not key=value`);
    labels[m[1]!] = m[2]!;
  }
  return labels;
}

type Obj = Record<string, unknown>;

function at(o: unknown, ...path: string[]): unknown {
  return path.reduce<unknown>((v, k) => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj)[k] : undefined), o);
}

function labelsAt(o: unknown, ...path: string[]): Record<string, unknown> {
  const v = at(o, ...path);
  return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
}

/** Helm 4 post-renders hooks too; a hook is never the gateway, it passes through untouched. */
export function isHelmHook(o: Obj): boolean {
  return at(o, 'metadata', 'annotations', 'helm.sh/hook') !== undefined;
}

/** The workload kinds a target can be (apps/v1). */
export type TargetKind = 'Deployment' | 'StatefulSet';

function isWorkload(o: Obj, kind: TargetKind): boolean {
  return o.kind === kind && typeof o.apiVersion === 'string' && o.apiVersion.startsWith('apps/');
}

function matches(o: Obj, rule: TargetRule): boolean {
  switch (rule.by) {
    case 'name':
      return at(o, 'metadata', 'name') === rule.name;
    case 'labels': {
      // The Deployment's own labels or its pod template's: charts label one or the other.
      const own = labelsAt(o, 'metadata', 'labels');
      const pod = labelsAt(o, 'spec', 'template', 'metadata', 'labels');
      const all = (l: Record<string, unknown>) => Object.entries(rule.labels).every(([k, v]) => l[k] === v);
      return all(own) || all(pod);
    }
    case 'container': {
      const containers = at(o, 'spec', 'template', 'spec', 'containers');
      return Array.isArray(containers) && containers.some((c) => at(c, 'name') === rule.container);
    }
  }
}

/** The one workload of `kind` (a Deployment by default) the rule picks. Hooks are skipped. Zero or several matches throw TargetError. */
export function selectTarget(docs: ManifestDoc[], rule: TargetRule, kind: TargetKind = 'Deployment'): ManifestDoc {
  const candidates = docs.filter((d) => d.object !== null && isWorkload(d.object, kind) && !isHelmHook(d.object));
  const found = candidates.filter((d) => matches(d.object!, rule));
  if (found.length === 1) return found[0]!;
  const present = candidates.map((d) => describeObject(d.object!));
  if (found.length === 0) {
    throw new TargetError(
      `no ${kind} matches ${describeRule(rule)}; the input has ${present.length === 0 ? `no ${kind}` : `these ${kind}s: ${present.join(', ')}`}`,
    );
  }
  throw new TargetError(
    `${found.length} ${kind}s match ${describeRule(rule)}: ${found.map((d) => describeObject(d.object!)).join(', ')}; pick one with --target-name or a more specific --target-selector`,
  );
}
