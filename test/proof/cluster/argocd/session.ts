/**
 * The Argo CD session on the cluster, as data and steps shared by the test (argocd.test.ts) and the
 * report (report-main.ts): Argo CD installed with gracegate's plugin, the repository served and
 * seeded with the gateways of gateways.ts, one Application each; the GitOps rollout (a commit that
 * raises the p99, synced by Argo CD under load through HAProxy); and the removal of it all.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planGateway } from '../../../../src/plan/plan-gateway';
import { podChanges, type PodChanges } from '../../../../src/pod/pod-changes';
import { resolveGatewaySpec } from '../../../../src/schema/parse-spec';
import { gatewayRouteManifests, testAppManifests } from '../addons';
import { refreshSidecarImage } from '../cluster';
import type { Installed } from '../gateway';
import { deleteNamespacesNow, kubectl, kubectlApply, kubectlJson, waitNamespacesGone } from '../kubectl';
import { summarize, type RunSummary } from '../results';
import { startLb, stopLb, terminationUnderLoad, type ClusterRun } from '../termination';
import { applicationManifest, kubeVersionForPlugins, refresh, waitSyncedHealthy } from './apps';
import { startGitServer, type GitServer } from './git-server';
import { GATEWAYS, seedFiles, specOf, specText, type ArgoGateway } from './gateways';
import { ARGOCD_NAMESPACE, argoCdBuilt, importArgoCdImages, installArgoCd, uninstallArgoCd } from './install';

export type ArgoCdSession = {
  git: GitServer;
  /** The first commit: every gateway of gateways.ts. */
  seeded: string;
  /** KUBE_VERSION as Argo CD gives it to the plugin here. */
  kubeVersion: string;
  /** What was run to install Argo CD and the plugin. */
  commands: string[];
  dir: string;
};

export function changesOf(s: { dir: string }, g: ArgoGateway, spec: Record<string, unknown>): PodChanges {
  return podChanges(planGateway(resolveGatewaySpec(spec, join(s.dir, `${g.key}.yaml`))));
}

export const selectorOf = (changes: PodChanges): string =>
  Object.entries(changes.selectorLabels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/** Argo CD and the plugin installed, the repository served and seeded, the Applications applied (not waited for). */
export async function setUpArgoCd(): Promise<ArgoCdSession> {
  await refreshSidecarImage();
  const built = argoCdBuilt();
  await importArgoCdImages(built);
  const commands = await installArgoCd(built);
  const git = await startGitServer();
  const s: ArgoCdSession = { git, seeded: '', kubeVersion: kubeVersionForPlugins(), commands, dir: mkdtempSync(join(tmpdir(), 'gracegate-argocd-')) };
  for (const g of GATEWAYS) {
    kubectl(['create', 'namespace', g.namespace]);
    kubectlApply(testAppManifests(g.namespace));
    kubectlApply(gatewayRouteManifests(g.namespace, g.options.name, changesOf(s, g, specOf(g)).selectorLabels, g.namespace));
  }
  s.seeded = git.commit(Object.assign({}, ...GATEWAYS.map(seedFiles)), 'two gateways, each with its gracegate.yaml');
  for (const g of GATEWAYS) kubectlApply(JSON.stringify(applicationManifest(g, git.url, git.branch)));
  return s;
}

/** The Applications (not cascading), the gateways' namespaces and Argo CD's removed; waits until the namespaces are gone. */
export async function tearDownArgoCd(s: ArgoCdSession | undefined): Promise<void> {
  for (const g of GATEWAYS)
    kubectl(['-n', ARGOCD_NAMESPACE, 'delete', 'application', g.name, '--ignore-not-found', '--wait=true', '--timeout=60s'], {
      allowFailure: true,
      timeoutMs: 70_000,
    });
  // The deletions under load ran in the tests; here the pods go without their grace periods.
  deleteNamespacesNow(GATEWAYS.map((g) => g.namespace));
  uninstallArgoCd();
  await s?.git.stop();
  if (s) rmSync(s.dir, { recursive: true, force: true });
  await waitNamespacesGone('the Argo CD session’s namespaces', [ARGOCD_NAMESPACE, ...GATEWAYS.map((g) => g.namespace)], 240_000);
}

/** What the termination checks need of a gateway Argo CD delivered: its spec as a file, its Service's NodePort. */
export function installedOf(s: ArgoCdSession, g: ArgoGateway, spec: Record<string, unknown>): Installed {
  const changes = changesOf(s, g, spec);
  const specFile = join(s.dir, `${g.key}-${Date.now()}.yaml`);
  writeFileSync(specFile, specText(spec));
  const svc = kubectlJson<{ spec: { ports: Array<{ port: number; nodePort?: number }> } }>(['-n', g.namespace, 'get', 'service', g.options.name]);
  const trafficNodePort = svc.spec.ports.find((p) => p.port === 80)?.nodePort;
  if (!trafficNodePort) throw new Error(`service ${g.namespace}/${g.options.name} has no NodePort for port 80`);
  return { options: g.options, dir: s.dir, specFile, trafficNodePort, healthService: changes.healthService?.name ?? null, selector: selectorOf(changes) };
}

/** The p99 the GitOps rollout commits (the lab spec's is 2 s): it changes the drain bound, so the grace period and the pod template. */
export const RAISED_P99_SECONDS = 3;

export type GitopsRollout = { run: ClusterRun; summary: RunSummary; revision: string; before: Record<string, unknown>; after: Record<string, unknown> };

/**
 * The GitOps rollout on `g` (Synced and Healthy at `from`): HAProxy in front, then under load a
 * commit raising the p99 and a refresh; Argo CD syncs it and the Deployment replaces every pod.
 * Ends when the old pods are gone and the new ones Ready and in the LB; the run's summary is the
 * report's row. HAProxy listens on `lbPort` in the outside namespace.
 */
export async function gitopsRollout(s: ArgoCdSession, g: ArgoGateway, from: string, lbPort: number): Promise<GitopsRollout> {
  const before = specOf(g);
  const after = specOf(g, { traffic: { longRequestP99Seconds: RAISED_P99_SECONDS } });
  await waitSyncedHealthy(g.name, from);
  const inst = installedOf(s, g, before);
  const lb = await startLb(inst, lbPort);
  let revision = '';
  try {
    const run = await terminationUnderLoad(inst, lb, 'sync', 'gracegate', () => {
      revision = s.git.commit({ [g.specPath]: specText(after) }, `${g.options.name}: p99 ${RAISED_P99_SECONDS} s`);
      refresh(g.name);
    });
    const summary = summarize(
      { key: 'argocd-gitops', setting: g.options.setting, chart: g.options.chart, replicas: g.options.replicas, actions: ['sync'] },
      run,
    );
    return { run, summary, revision, before, after };
  } finally {
    await stopLb(lb);
  }
}
