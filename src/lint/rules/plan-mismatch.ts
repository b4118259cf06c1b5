import { isDeepStrictEqual } from 'node:util';
import { yamlValue } from '../../core/yaml-input';
import type { Derived } from '../../model/derived';
import { applyPodChanges, extraObjects, type K8sObject } from '../../pod';
import { ANNOTATIONS, HC_CONFIG_KEY, isHealthServiceOf } from '../../pod/names';
import type { Plan } from '../../plan/plan-gateway';
import { istioSeconds } from '../istio';
import type { LintContext } from '../context';
import { at, listAt, objAt, selectorMatches, type LintObject } from '../objects';
import type { LintFindingDraft, LintRule } from '../rule';
import { planTarget } from './common';
import { isLive, liveDifferences, ownedPods, plannedPod } from './live-compare';
import { isObject, pathText, type JsonValue, type Path } from '../../core/json';

function show(v: unknown): string {
  if (v === undefined) return 'absent';
  const s = JSON.stringify(v);
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
}

function derivation(d: Derived | undefined): Pick<LintFindingDraft, 'numbers' | 'formula'> {
  if (!d) return {};
  return {
    formula: d.formula,
    numbers: Object.fromEntries(Object.entries(d.inputs).map(([k, v]) => [k, { value: v.value, source: v.source }])),
  };
}

/**
 * Fields of the gateway workload the plan decides, each with the derivation of its number if it has
 * one; `item` names the list entry (container, volume) a path ends in.
 */
function ownedPaths(ctx: LintContext, owner: LintObject, expected: K8sObject, hpa: boolean): Array<{ path: Path; derived?: Derived; item?: string }> {
  const plan = ctx.plan!.plan;
  const changes = ctx.plan!.changes;
  const pod = ['spec', 'template', 'spec'];
  const out: Array<{ path: Path; derived?: Derived; item?: string }> = [];
  if (!hpa) out.push({ path: ['spec', 'replicas'] });
  if (owner.kind === 'Deployment') out.push({ path: ['spec', 'strategy'] }, { path: ['spec', 'minReadySeconds'], derived: plan.derivations.minReadySeconds });
  for (const key of Object.keys(changes.podAnnotations)) out.push({ path: ['spec', 'template', 'metadata', 'annotations', key] });
  out.push({ path: [...pod, 'terminationGracePeriodSeconds'], derived: plan.derivations.terminationGracePeriodSeconds });
  if (changes.affinity) out.push({ path: [...pod, 'affinity', 'podAntiAffinity'] });
  // Lists the plan adds to, by name: only its own entries are compared. The sidecar is compared in
  // the list the plan puts it in (a native sidecar is an init container).
  for (const list of ['volumes', 'containers', 'initContainers'] as const) {
    const actual = listAt(owner.value, [...pod, list]);
    const wanted =
      list === 'volumes'
        ? changes.volumes.map((v) => v.name)
        : listAt(expected, [...pod, list]).some((c) => isObject(c) && c.name === changes.hcContainer.name)
          ? [changes.hcContainer.name]
          : [];
    let appended = 0;
    for (const name of wanted) {
      const i = actual.findIndex((e) => isObject(e) && e.name === name);
      out.push({ path: [...pod, list, i >= 0 ? i : actual.length + appended++], item: name });
    }
  }
  const proxyAt = listAt(owner.value, [...pod, 'containers']).findIndex((c) => isObject(c) && c.name === changes.proxy.containerName);
  if (proxyAt >= 0) out.push({ path: [...pod, 'containers', proxyAt, 'lifecycle', 'preStop'] });
  return out;
}

/** The same field in the expected object: list entries (containers, volumes) are matched by name, not position. */
function expectedAt(owner: LintObject, expected: K8sObject, path: Path, item?: string): unknown {
  const i = path.findIndex((p, k) => typeof p === 'number' && ['containers', 'initContainers', 'volumes'].includes(path[k - 1] as string));
  if (i < 0) return at(expected, path);
  const here = at(owner.value, path.slice(0, i + 1));
  const name = item ?? (isObject(here) ? here.name : undefined);
  const j = listAt(expected, path.slice(0, i)).findIndex((e) => isObject(e) && e.name === name);
  return j >= 0 ? at(listAt(expected, path.slice(0, i))[j], path.slice(i + 1)) : undefined;
}

function sameObject(o: LintObject, e: K8sObject): boolean {
  return o.kind === e.kind && o.name === e.metadata.name && (o.namespace === undefined || o.namespace === e.metadata.namespace);
}

type Push = (object: LintObject, path: Path, actual: unknown, want: unknown, what: string, extra?: Partial<LintFindingDraft>) => void;

/** A ProxyConfig value with its durations in seconds, so `5s`, `5.0s` and `0m5s` compare equal. */
function normalised(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalised);
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalised(x)]));
  return typeof v === 'string' && istioSeconds(v) !== undefined && /[a-z]$/.test(v) ? istioSeconds(v) : v;
}

/**
 * proxy.istio.io/config is compared key by key, as Istio reads it: each key the plan sets must
 * hold the plan's value; keys of the user's own are kept, and the fix merges the plan's in.
 */
function proxyConfigDrift(owner: LintObject, path: Path, actual: unknown, want: unknown, plan: Plan, push: Push): void {
  const parse = (t: unknown): Record<string, unknown> | undefined => {
    if (typeof t !== 'string') return {};
    const v = yamlValue(t);
    return 'value' in v && isObject(v.value) ? v.value : undefined;
  };
  const mine = parse(actual);
  const planned = parse(want)!;
  // An annotation that does not parse is istio-proxy-config-invalid's to report.
  if (mine === undefined) return;
  const differing = Object.keys(planned).filter((k) => !isDeepStrictEqual(normalised(mine[k]), normalised(planned[k])));
  if (differing.length === 0) return;
  const numbers: NonNullable<LintFindingDraft['numbers']> = {};
  const inputs = { terminationDrainDuration: plan.derivations.terminationDrainDurationSeconds, drainDuration: plan.derivations.drainDurationSeconds };
  for (const k of differing) {
    const d = inputs[k as keyof typeof inputs];
    if (d) numbers[`plan ${k}`] = { value: d.value, source: d.formula };
  }
  push(
    owner,
    path,
    Object.fromEntries(differing.map((k) => [k, mine[k]])),
    Object.fromEntries(differing.map((k) => [k, planned[k]])),
    `proxy.istio.io/config ${differing.join(', ')}`,
    {
      ...(Object.keys(numbers).length > 0 ? { numbers } : {}),
      fix: {
        description: `proxy.istio.io/config with the plan's ${differing.join(', ')} (other keys kept)`,
        edits: [{ object: owner.id, path, set: JSON.stringify({ ...mine, ...planned }) }],
      },
    },
  );
}

export const PLAN_RULES: LintRule[] = [
  {
    id: 'plan-mismatch',
    severity: 'error',
    summary: 'with --spec: a field of the gateway, its Services, budget or sidecar config differs from what the plan computes',
    rationale:
      "The plan computes every number from the LB's behaviour, the request p99 and the rollout (docs/plan.md); the sidecar, the grace period, the strategy and the proxy settings only work together at those values. The expected objects are the plan's pod changes applied to the rendered workload (the function post-render uses) and synth's manifests.yaml objects.",
    check: (ctx) => {
      const target = planTarget(ctx);
      const given = ctx.plan;
      if (!target || !given) return [];
      const hpa = ctx.autoscalerOf(target) !== undefined;
      const owner = target.owner;
      const expected = applyPodChanges(owner.value as K8sObject, given.changes, { setReplicas: !hpa });
      const drafts: LintFindingDraft[] = [];
      const live = isLive(owner);
      const push: Push = (object, path, actual, want, what, extra = {}) => {
        drafts.push({
          object,
          path,
          message: `${what}: ${isLive(object) ? 'the cluster has' : 'the manifest has'} ${show(actual)}, the plan ${show(want)}`,
          remediation: `set it to the plan's value (gracegate synth or post-render with ${given.source} write it)`,
          ...(want !== undefined ? { fix: { description: `${what} as planned`, edits: [{ object: object.id, path, set: want as JsonValue }] } } : {}),
          ...extra,
        });
      };

      for (const { path, derived, item } of ownedPaths(ctx, owner, expected, hpa)) {
        const actual = at(owner.value, path);
        let want = expectedAt(owner, expected, path, item);
        // The sidecar's image is a delivery choice (synth --image), not the plan's: keep the manifest's.
        if (item === given.changes.hcContainer.name && isObject(actual) && isObject(want) && typeof actual.image === 'string')
          want = { ...want, image: actual.image };
        if (path[path.length - 1] === ANNOTATIONS.proxyConfig) {
          proxyConfigDrift(owner, path, actual, want, given.plan, push);
          continue;
        }
        if (live) {
          for (const d of liveDifferences(want, actual, path)) push(owner, d.path, d.live, d.planned, pathText(d.path), derivation(derived));
          continue;
        }
        if (!isDeepStrictEqual(actual, want))
          push(
            owner,
            path,
            actual,
            want,
            path
              .filter((p) => typeof p === 'string')
              .slice(-2)
              .join('.'),
            derivation(derived),
          );
      }

      // The objects no chart carries (synth's manifests.yaml): each must be in the input, as planned.
      for (const extra of extraObjects(given.changes)) {
        // istiod makes a Gateway API gateway's budget from the parameters, named after its Deployment.
        const api = given.changes.gatewayApi;
        const found =
          ctx.objects.find((o) => sameObject(o, extra)) ??
          (api && extra.kind === 'PodDisruptionBudget'
            ? ctx.objects.find((o) => sameObject(o, { ...extra, metadata: { ...extra.metadata, name: api.deploymentName } }))
            : undefined);
        if (!found) {
          drafts.push({
            object: owner,
            path: [],
            message: `${extra.kind}/${extra.metadata.namespace}/${extra.metadata.name} is not in the input: the plan needs it beside ${owner.id}`,
            remediation: "apply synth's manifests.yaml with the chart (and lint them together)",
          });
          continue;
        }
        if (extra.kind === 'ConfigMap') {
          const raw = objAt(found.value, ['data'])[HC_CONFIG_KEY];
          let actual: unknown = raw;
          try {
            actual = typeof raw === 'string' ? JSON.parse(raw) : raw;
          } catch {
            // Compared as text: not the plan's JSON either way.
          }
          const want = JSON.parse((extra.data as Record<string, string>)[HC_CONFIG_KEY]!);
          if (!isDeepStrictEqual(actual, want))
            push(found, ['data', HC_CONFIG_KEY], actual, want, 'hc.json', {
              fix: {
                description: 'hc.json as planned',
                edits: [{ object: found.id, path: ['data', HC_CONFIG_KEY], set: (extra.data as Record<string, string>)[HC_CONFIG_KEY]! }],
              },
            });
          continue;
        }
        for (const [key, want] of Object.entries(objAt(extra, ['spec']))) {
          const actual = objAt(found.value, ['spec'])[key];
          if (isLive(found)) for (const d of liveDifferences(want, actual, ['spec', key])) push(found, d.path, d.live, d.planned, pathText(d.path));
          else if (!isDeepStrictEqual(actual, want)) push(found, ['spec', key], actual, want, `spec.${key}`);
        }
      }

      // What runs: the workload's live Pods, after the injector, hold every pod field the plan sets.
      if (live) {
        const planned = plannedPod(expected, given.changes);
        const selector = at(owner.value, ['spec', 'selector']);
        for (const pod of ownedPods(ctx.objects, owner, (p) => selectorMatches(selector, p.labels))) {
          const want = structuredClone(planned) as Record<string, any>;
          // The sidecar's image is a delivery choice: keep the pod's.
          for (const list of ['containers', 'initContainers'] as const)
            for (const c of (want.spec[list] ?? []) as Array<Record<string, unknown>>) {
              const mine = listAt(pod.value, ['spec', list]).find((x) => isObject(x) && x.name === c.name);
              if (c.name === given.changes.hcContainer.name && isObject(mine) && typeof mine.image === 'string') c.image = mine.image;
            }
          for (const d of liveDifferences(want, pod.value, [])) push(pod, d.path, d.live, d.planned, pathText(d.path));
        }
      }

      // The traffic policy the plan needs on the gateway's own Services the LB sends traffic through.
      const policy = given.changes.gatewayServiceTrafficPolicy;
      if (policy) {
        for (const svc of ctx
          .servicesOf(target)
          .filter((s) => ['LoadBalancer', 'NodePort'].includes(String(objAt(s.value, ['spec']).type)) && s.name !== given.changes.healthService?.name)) {
          const actual = objAt(svc.value, ['spec']).externalTrafficPolicy ?? 'Cluster';
          if (actual !== policy) push(svc, ['spec', 'externalTrafficPolicy'], actual, policy, 'externalTrafficPolicy');
        }
      }

      // The health port the plan puts on the gateway's own Services (the LB's probe then takes the traffic's rules).
      const healthPort = given.changes.gatewayServiceHealthPort;
      if (healthPort) {
        // The gateway's own Services, not the health Service an earlier plan had gracegate make.
        const traffic = ctx
          .servicesOf(target)
          .filter(
            (s) => !isHealthServiceOf(s.value, given.changes.gateway.name) && ['LoadBalancer', 'NodePort'].includes(String(objAt(s.value, ['spec']).type)),
          );
        for (const svc of traffic) {
          const ports = listAt(svc.value, ['spec', 'ports']);
          const i = ports.findIndex((p) => isObject(p) && p.name === healthPort.name);
          const actual = i < 0 ? undefined : (ports[i] as Record<string, unknown>);
          const same =
            actual &&
            actual.port === healthPort.port &&
            actual.targetPort === healthPort.targetPort &&
            (healthPort.nodePort === undefined || actual.nodePort === healthPort.nodePort);
          if (!same) push(svc, ['spec', 'ports', ...(i < 0 ? [] : [i])], actual, healthPort, `the health port ${healthPort.name}`);
        }
      }

      // Annotations the plan's LB needs on the gateway's own LoadBalancer Service (AWS NLB).
      const wanted = given.changes.gatewayServiceAnnotations;
      if (Object.keys(wanted).length > 0) {
        for (const svc of ctx.servicesOf(target).filter((s) => objAt(s.value, ['spec']).type === 'LoadBalancer')) {
          for (const [key, want] of Object.entries(wanted)) {
            const actual = svc.annotations[key];
            if (actual !== want) push(svc, ['metadata', 'annotations', key], actual, want, key);
          }
        }
      }
      return drafts;
    },
  },
];
