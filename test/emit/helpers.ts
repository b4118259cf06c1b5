/**
 * Shared by the manifests tests (pod, emit, constructs, synth): repo paths, the real helm
 * binaries, the example specs and Kubernetes schema validation with kubernetes-models@4.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { planGateway, type Plan } from '../../src/plan/plan-gateway';
import { podChanges, type PodChanges, type PodChangesOptions } from '../../src/pod/pod-changes';
import { parseGatewaySpec, type ResolvedSpec } from '../../src/schema/parse-spec';

import { REPO_ROOT, TOOLS } from '../support/repo';
import { exampleSpecFiles } from '../support/examples';

export { REPO_ROOT };
export const GATEWAY_CHART = join(REPO_ROOT, 'charts', 'gateway-additional-containers');
export const CLI = join(REPO_ROOT, 'bin', 'gracegate.js');

/** The real helm binaries scripts/prepare-test-env.sh installs (FACTS.md §8). */
export const HELMS = {
  'helm 3.17': TOOLS.helm3,
  'helm 4.1': TOOLS.helm4,
} as const;

export function helm(binary: string, args: string[]): string {
  if (!existsSync(binary)) throw new Error(`${binary} missing: run bash scripts/prepare-test-env.sh`);
  const r = spawnSync(binary, args, {
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, HELM_CACHE_HOME: join(REPO_ROOT, '.cache', 'helm'), HELM_CONFIG_HOME: join(REPO_ROOT, '.cache', 'helm') },
  });
  if (r.status !== 0) throw new Error(`${binary} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

export function yamlDocs(text: string): Array<Record<string, any>> {
  return parseAllDocuments(text)
    .map((d) => d.toJS())
    .filter((d) => d !== null);
}

export type Example = { file: string; resolved: ResolvedSpec; plan: Plan; changes: PodChanges };

export function example(file: string, options: PodChangesOptions = {}): Example {
  const path = join(REPO_ROOT, 'examples', file);
  const resolved = parseGatewaySpec(readFileSync(path, 'utf8'), path);
  const plan = planGateway(resolved);
  return { file, resolved, plan, changes: podChanges(plan, options) };
}

export function allExamples(): Example[] {
  return exampleSpecFiles('GracefulGateway').map((f) => example(f));
}

/** Validates one object against the Kubernetes schema (kubernetes-models@4); throws on a problem. */
export function validateK8s(obj: Record<string, any>): void {
  const models: Record<string, any> = {
    'apps/v1/Deployment': require('kubernetes-models/apps/v1').Deployment,
    'v1/Service': require('kubernetes-models/v1').Service,
    'v1/ConfigMap': require('kubernetes-models/v1').ConfigMap,
    'v1/ServiceAccount': require('kubernetes-models/v1').ServiceAccount,
    'v1/Namespace': require('kubernetes-models/v1').Namespace,
    'policy/v1/PodDisruptionBudget': require('kubernetes-models/policy/v1').PodDisruptionBudget,
    'networking.k8s.io/v1/NetworkPolicy': require('kubernetes-models/networking.k8s.io/v1').NetworkPolicy,
    'autoscaling/v2/HorizontalPodAutoscaler': require('kubernetes-models/autoscaling/v2').HorizontalPodAutoscaler,
    'rbac.authorization.k8s.io/v1/Role': require('kubernetes-models/rbac.authorization.k8s.io/v1').Role,
    'rbac.authorization.k8s.io/v1/RoleBinding': require('kubernetes-models/rbac.authorization.k8s.io/v1').RoleBinding,
  };
  const Model = models[`${obj.apiVersion}/${obj.kind}`];
  if (!Model) throw new Error(`no model for ${obj.apiVersion} ${obj.kind}`);
  new Model(obj).validate();
}

/** The container of a pod template by name. */
export function containerOf(deployment: Record<string, any>, name: string): Record<string, any> {
  const c = deployment.spec.template.spec.containers.find((x: { name: string }) => x.name === name);
  if (!c) throw new Error(`no container ${name}`);
  return c;
}
