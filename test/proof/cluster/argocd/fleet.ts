/**
 * The ApplicationSet's fleet: plugins/argocd/applicationset/applicationset.yaml over a repository
 * holding its example-repo/ (three gateways in two namespaces), synced by Argo CD as a user syncs
 * an Application without an automated policy (`argocd app sync`: the operation it writes).
 *
 * The example's gateways go to namespaces of the test's own (`fleet-` before the example's): the
 * cluster's `up` installs examples/haproxy.yaml's igw-public in istio-ingress, and stays.
 *
 * What the test does that the README asks of a user: the namespaces exist before the sync (the
 * template has no CreateNamespace, and a Helm release or plugin must not own its namespace). What
 * it does in place of a cloud: the gateway chart's Service is a LoadBalancer, and Argo CD calls one
 * without an address Progressing; the cluster has no load-balancer controller, so the test writes
 * the address into the Service's status as one would (an address of TEST-NET-1, RFC 5737, which
 * nothing sends to: kube-proxy's rules for it stay inside the nodes' namespaces).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as yamlParse } from 'yaml';
import { planGateway } from '../../../../src/plan/plan-gateway';
import { podChanges, type PodChanges } from '../../../../src/pod/pod-changes';
import { resolveGatewaySpec } from '../../../../src/schema/parse-spec';
import { REPO_ROOT } from '../../../support/repo';
import { deleteNamespacesNow, kubectl, kubectlJson, waitNamespacesGone } from '../kubectl';
import { createGatewayNamespace, PSA_ENFORCE } from '../pod-security';
import { waitUntil } from '../sh';
import { type AppSource, appStatus, describeApp, isSyncedHealthyAt, type AppStatus } from './apps';
import { ARGOCD_NAMESPACE } from './install';

export const APPSET_DIR = join(REPO_ROOT, 'plugins/argocd/applicationset');
export const EXAMPLE_GATEWAYS = join(APPSET_DIR, 'example-repo/gateways');
/** The repoURL applicationset.yaml names, for the user to replace. */
export const EXAMPLE_URL = 'https://git.example.com/platform/gateways.git';
/** The ApplicationSet's name in applicationset.yaml. */
export const APPSET_NAME = 'gracegate-gateways';
/** The address the test writes into each LoadBalancer Service's status, in place of a cloud's controller. */
export const LB_INGRESS_IP = '192.0.2.10';

/** Where the test puts an example gateway's namespace. */
export const fleetNamespace = (exampleNamespace: string): string => `fleet-${exampleNamespace}`;

export type FleetApp = AppSource & {
  /** The gateway's name (the spec's metadata.name: its Deployment's and Service's). */
  gateway: string;
  /** Its gracegate.yaml as committed: the example's, in the test's namespace. */
  specText: string;
  changes: PodChanges;
  /** The ids and messages of its plan's findings. */
  findings: Array<{ id: string; message: string }>;
  /** The example spec's health NodePort, when it names one. */
  nodePort?: number;
};

/** One Application a gateway directory of example-repo, as the template names it, with the plan of its spec. */
export function fleetApps(pluginName: string, chartParameter: string): FleetApp[] {
  return readdirSync(EXAMPLE_GATEWAYS).flatMap((exampleNs) =>
    readdirSync(join(EXAMPLE_GATEWAYS, exampleNs)).map((gw) => {
      const file = join(EXAMPLE_GATEWAYS, exampleNs, gw, 'gracegate.yaml');
      const ns = fleetNamespace(exampleNs);
      const text = readFileSync(file, 'utf8');
      const specText = text.replace(new RegExp(`^  namespace: ${exampleNs}$`, 'm'), `  namespace: ${ns}`);
      if (specText === text) throw new Error(`${file}: no metadata.namespace ${exampleNs} to move`);
      const spec = yamlParse(specText) as { spec: { health?: { nodePort?: number } } };
      const plan = planGateway(resolveGatewaySpec(spec, file));
      const changes = podChanges(plan);
      const nodePort = spec.spec.health?.nodePort;
      return {
        name: `${ns}-${gw}`,
        namespace: ns,
        path: `gateways/${ns}/${gw}`,
        plugin: { name: pluginName, parameters: [{ name: 'chart', string: chartParameter }] },
        gateway: gw,
        specText,
        changes,
        findings: plan.findings.map((f) => ({ id: f.id, message: f.message })),
        ...(nodePort !== undefined ? { nodePort } : {}),
      };
    }),
  );
}

const namespacesOf = (apps: FleetApp[]): string[] => [...new Set(apps.map((a) => a.namespace))].sort();

export const usesHostPort = (a: FleetApp): boolean => (a.changes.hcContainer.ports ?? []).some((p) => p.hostPort !== undefined);

/**
 * The gateways' namespaces, created before the sync. Pod Security: baseline enforced, as on every
 * gateway namespace here, except where a gateway's health port is a hostPort, which baseline
 * forbids (the NetScaler gateway's): that namespace says privileged, explicitly.
 */
export function createFleetNamespaces(apps: FleetApp[]): void {
  for (const ns of namespacesOf(apps)) {
    if (!apps.some((a) => a.namespace === ns && usesHostPort(a))) createGatewayNamespace(ns);
    else
      kubectl(['apply', '-f', '-'], {
        input: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { [PSA_ENFORCE]: 'privileged' } } }),
      });
  }
}

/** What `argocd app sync NAME --revision REV` asks of the application controller: an operation on the Application. */
export function syncApplication(name: string, revision: string): void {
  const operation = { initiatedBy: { username: 'gracegate-test' }, sync: { revision, syncStrategy: { hook: {} } } };
  kubectl(['-n', ARGOCD_NAMESPACE, 'patch', 'application', name, '--type', 'merge', '-p', JSON.stringify({ operation })]);
}

/** Gives every LoadBalancer Service of `namespace` without an address the test's, as a cloud's controller would. */
export function announceLoadBalancers(namespace: string): void {
  const services = kubectlJson<{ items: Array<{ metadata: { name: string }; spec: { type: string }; status?: { loadBalancer?: { ingress?: unknown[] } } }> }>([
    '-n',
    namespace,
    'get',
    'services',
  ]).items;
  for (const s of services) {
    if (s.spec.type !== 'LoadBalancer' || (s.status?.loadBalancer?.ingress?.length ?? 0) > 0) continue;
    kubectl([
      '-n',
      namespace,
      'patch',
      'service',
      s.metadata.name,
      '--subresource=status',
      '--type',
      'merge',
      '-p',
      JSON.stringify({ status: { loadBalancer: { ingress: [{ ip: LB_INGRESS_IP }] } } }),
    ]);
  }
}

/** Waits until every Application is Synced and Healthy at `revision`, its sync there succeeded; answers the LB addresses meanwhile. */
export async function waitFleetSyncedHealthy(apps: FleetApp[], revision: string, timeoutMs: number): Promise<Map<string, AppStatus>> {
  const last = new Map<string, AppStatus>();
  try {
    return await waitUntil(
      `the ApplicationSet's ${apps.length} Applications Synced and Healthy at ${revision.slice(0, 8)}`,
      timeoutMs,
      () => {
        for (const ns of namespacesOf(apps)) announceLoadBalancers(ns);
        for (const a of apps) last.set(a.name, appStatus(a.name));
        return apps.every((a) => isSyncedHealthyAt(last.get(a.name)!, revision)) ? last : undefined;
      },
      1000,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last seen:\n${[...last].map(([n, s]) => `  ${n}: ${describeApp(s)}`).join('\n')}`);
  }
}

/**
 * The fleet removed: the ApplicationSet (its Applications go with it; the template preserves what
 * they applied, so no resources finalizer holds them), then the namespaces, their gateway pods without their
 * grace period (deleteNamespacesNow): their sequences are not under test here, and the F5 gateway's
 * plan holds a pod for minutes. Waits until the namespaces are gone.
 */
export async function removeFleet(apps: FleetApp[]): Promise<void> {
  kubectl(['-n', ARGOCD_NAMESPACE, 'delete', 'applicationset', APPSET_NAME, '--ignore-not-found', '--wait=true', '--timeout=60s'], {
    allowFailure: true,
    timeoutMs: 70_000,
  });
  for (const a of apps)
    kubectl(['-n', ARGOCD_NAMESPACE, 'delete', 'application', a.name, '--ignore-not-found', '--wait=true', '--timeout=60s'], {
      allowFailure: true,
      timeoutMs: 70_000,
    });
  const namespaces = namespacesOf(apps);
  deleteNamespacesNow(namespaces);
  await waitNamespacesGone(`the fleet's namespaces (${namespaces.join(', ')})`, namespaces, 180_000);
}
