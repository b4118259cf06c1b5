import { ApiObject, JsonPatch } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { blockingFindings, type FailOn } from '../../model/finding';
import { planWorkload, type WorkloadPlan } from '../../plan/workload/plan-workload';
import { appContainerIndex, withPreStop } from '../../pod/workload/apply';
import type { K8sObject } from '../../pod/k8s';
import { workloadChanges, workloadExtraObjects, withFlag, type WorkloadChanges } from '../../pod/workload/pod-changes';
import { resolveWorkloadSpec, type ResolvedWorkloadSpec } from '../../schema/spec-kinds';
import type { WorkloadSpecInput } from '../../schema/workload-spec';
import { apiObjectOf } from './api-object';

/** A cdk8s-plus-28 workload gracegate can make graceful. */
export type KplusWorkload = kplus.Deployment | kplus.StatefulSet;

export interface GracefulWorkloadOptions {
  /**
   * Plan findings at or above this severity fail synthesis (through `node.addValidation`).
   * @default error — an error finding means pods would lose requests (e.g. an exec preStop in a
   * distroless image), so nothing should be deployed until it is fixed.
   */
  readonly failOn?: FailOn;
}

function isResolved(spec: WorkloadSpecInput | ResolvedWorkloadSpec): spec is ResolvedWorkloadSpec {
  return typeof spec === 'object' && spec !== null && 'given' in spec && 'spec' in spec;
}

/**
 * The spec as the workload really is: cdk8s-plus chooses the pods' labels itself, so its selector
 * fills spec.workload.selectorLabels unless the spec gives them (the PDB must select these pods).
 */
function withWorkloadSelector(workload: KplusWorkload, resolved: ResolvedWorkloadSpec): ResolvedWorkloadSpec {
  const w = resolved.spec.spec.workload;
  if (w.selectorLabels !== undefined) return resolved;
  const spec = { ...resolved.spec, spec: { ...resolved.spec.spec, workload: { ...w, selectorLabels: { ...workload.matchLabels } } } };
  return { spec, given: resolved.given };
}

/**
 * Makes a cdk8s-plus-28 Deployment or StatefulSet leave service without losing requests: the
 * workload plan (docs/workloads.md), put into the object the user built.
 *
 * cdk8s-plus sets most pod fields only in its constructors, so on a built workload its typed API
 * reaches little. What goes where, and why:
 * - typed API: the shutdown timeout's env variable (`container.env.addVariable`) and the
 *   anti-affinity (`scheduling.spread`);
 * - JSON patches (escape hatch) for fields cdk8s-plus cannot set after construction: the grace
 *   period, replicas, the shutdown flag in args, and the strategy, written with the generated
 *   `IntOrString` values: plain numbers there come out as `rollingUpdate: {}` (cdk8s-team/cdk8s#2172);
 * - the preStop, after serialisation: the 1.28 schema behind cdk8s-plus-28 has no `sleep` handler,
 *   so the typed object drops a patched `preStop.sleep` and writes `preStop: {}` (cdk8s#2172), and
 *   a JSON patch cannot merge a preStop into a lifecycle that may or may not exist.
 * Tests assert every field in the synthesised YAML, so a dropped field fails.
 */
export class GracefulWorkload extends Construct {
  /** Makes `workload` graceful per `spec` (a GracefulWorkload spec whose metadata names the workload). */
  static of(workload: KplusWorkload, spec: WorkloadSpecInput | ResolvedWorkloadSpec, options: GracefulWorkloadOptions = {}): GracefulWorkload {
    return new GracefulWorkload(workload, 'Graceful', workload, spec, options);
  }

  readonly plan: WorkloadPlan;
  readonly changes: WorkloadChanges;
  readonly disruptionBudget?: ApiObject;

  private constructor(scope: Construct, id: string, workload: KplusWorkload, spec: WorkloadSpecInput | ResolvedWorkloadSpec, options: GracefulWorkloadOptions) {
    super(scope, id);
    const resolved = withWorkloadSelector(workload, isResolved(spec) ? spec : resolveWorkloadSpec(spec));
    this.plan = planWorkload(resolved);
    this.changes = workloadChanges(this.plan);
    const changes = this.changes;
    const kind = workload instanceof kplus.Deployment ? 'Deployment' : 'StatefulSet';
    const problems: string[] = [];
    if (kind !== changes.workload.kind) problems.push(`spec.workload.kind is ${changes.workload.kind} but the workload is a ${kind}`);
    if (workload.name !== changes.workload.name)
      problems.push(`metadata.name '${changes.workload.name}' is not the workload's name '${workload.name}' (set metadata: { name } on the ${kind})`);
    const namespace = workload.metadata.namespace ?? 'default';
    if (namespace !== changes.workload.namespace)
      problems.push(`metadata.namespace '${changes.workload.namespace}' is not the workload's namespace '${namespace}'`);

    const containers = workload.containers;
    const at = appContainerIndex(
      containers.map((c) => ({ name: c.name })),
      changes,
      `${kind}/${workload.name}`,
    );
    const app = containers[at]!;
    for (const { name, value } of changes.env) app.env.addVariable(name, kplus.EnvValue.fromValue(value));
    if (changes.affinity) {
      const soft = 'preferredDuringSchedulingIgnoredDuringExecution' in changes.affinity.podAntiAffinity;
      workload.scheduling.spread({ topology: kplus.Topology.HOSTNAME, ...(soft ? { weight: 100 } : {}) });
    }

    const api = ApiObject.of(workload);
    const container = `/spec/template/spec/containers/${at}`;
    api.addJsonPatch(
      JsonPatch.add('/spec/replicas', changes.replicas),
      JsonPatch.add('/spec/template/spec/terminationGracePeriodSeconds', changes.terminationGracePeriodSeconds),
    );
    if (changes.flag) api.addJsonPatch(JsonPatch.add(`${container}/args`, withFlag(app.args ?? [], changes.flag)));
    if (changes.strategy) {
      const { maxSurge, maxUnavailable } = changes.strategy.rollingUpdate;
      api.addJsonPatch(
        JsonPatch.add('/spec/strategy', {
          type: changes.strategy.type,
          rollingUpdate: { maxSurge: intOrString(maxSurge), maxUnavailable: intOrString(maxUnavailable) },
        }),
      );
    }
    afterSerialisation(api, (json) => {
      const pod = ((json.spec as Record<string, any>).template as Record<string, any>).spec as Record<string, any>;
      pod.containers[at] = withPreStop(pod.containers[at], changes.preStop);
      return json;
    });

    const [pdb] = workloadExtraObjects(changes);
    if (pdb) this.disruptionBudget = apiObjectOf(this, 'DisruptionBudget', pdb);
    this.node.addValidation({
      validate: () => [
        ...problems,
        ...blockingFindings(this.plan.findings, options.failOn ?? 'error').map(
          (f) => `${f.severity} ${f.id} (${f.field}): ${f.message}; fix: ${f.remediation}`,
        ),
      ],
    });
  }
}

/**
 * Runs `edit` on the object's JSON after cdk8s has serialised it (the typed filtering included):
 * what `edit` writes survives whatever the 1.28 schema knows. One wrapper per object; `edit` must
 * be idempotent, since cdk8s may serialise an object more than once.
 */
function afterSerialisation(api: ApiObject, edit: (json: K8sObject) => K8sObject): void {
  const serialise = api.toJson.bind(api);
  Object.defineProperty(api, 'toJson', { value: () => edit(serialise() as K8sObject), configurable: true, writable: true });
}

/** A rolling-update bound as cdk8s-plus's IntOrString: a count, or a percentage string. */
function intOrString(v: number | string): kplus.k8s.IntOrString {
  return typeof v === 'number' ? kplus.k8s.IntOrString.fromNumber(v) : kplus.k8s.IntOrString.fromString(v);
}
