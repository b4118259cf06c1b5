/**
 * Every delivery path of docs/delivery.md applied to the real cluster, each in a namespace of its
 * own: a bundled example placed on the cluster (placedSpec), planned, and delivered the way its
 * docs say (the values overlay with helm install, Helm 3's --post-renderer script, Helm 4's
 * post-renderer plugin, `kubectl apply -k` with the Kustomize component, `kubectl apply
 * --server-side` of the cdk8s app's synth output, a Gateway API Gateway naming the parameters
 * ConfigMap). Each ends with a Ready gateway behind which the test app answers, described as an
 * `Installed` that termination.ts runs a deletion on.
 */
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Chart } from 'cdk8s';
import { parse as parseYaml, parseAllDocuments, stringify as yamlStringify } from 'yaml';
import { GracefulGateway } from '../../../../src/delivery/cdk8s/graceful-gateway';
import { planGateway } from '../../../../src/plan/plan-gateway';
import { podChanges, type PodChanges } from '../../../../src/pod/pod-changes';
import { resolveGatewaySpec } from '../../../../src/schema/parse-spec';
import { planWorkload } from '../../../../src/plan/workload/plan-workload';
import { workloadChanges, type WorkloadChanges } from '../../../../src/pod/workload/pod-changes';
import { resolveWorkloadSpec } from '../../../../src/schema/spec-kinds';
import { REPO_ROOT } from '../../../support/repo';
import { cacheDir } from '../../../support/fixtures';
import { labSpec, type LbSetting } from '../../harness/scenario';
import { CLUSTER_DOMAIN, NODES } from '../layout';
import { gatewayRouteManifests, testAppManifests } from '../addons';
import { chartDir } from '../charts';
import { CLUSTER_NETWORK_POLICY, gracegate, type Installed } from '../gateway';
import { createGatewayNamespace } from '../pod-security';
import { deleteNamespacesNow, helm, kubectl, kubectlApply, kubectlJson } from '../kubectl';
import { run, waitUntil } from '../sh';
import { testDir } from '../../../support/tmp';

export type PathKey = 'overlay-1.27.9' | 'overlay-1.31' | 'helm3-post-render' | 'helm4-plugin' | 'kustomize' | 'cdk8s' | 'gateway-api';

export type DeliveryPath = {
  key: PathKey;
  /** What the test's title says. */
  title: string;
  /** The bundled example the gateway is planned from (examples/…). */
  example: string;
  /** The chart version rendered (or the Istio version for gateway-api). */
  chart: string;
  setting: LbSetting;
  /** The namespace (the example's own namespace is replaced: one per path). */
  namespace: string;
  healthNodePort: number;
  /**
   * Planned with `observability.prometheus: scrape-config` (a 1 s scrape) instead of the lab's
   * `none`: synth's scrape job and rule file run in a real Prometheus (delivery/live-prometheus.ts).
   */
  prometheus?: boolean;
};

/** The Gateway API CRDs' module version (scripts/prepare-test-env.sh downloads it). */
export const GATEWAY_API_VERSION = 'v1.4.1';

/**
 * A bundled example placed on the test cluster: its metadata.name, chart kind and its autoscaling
 * or Gateway API class are kept; the namespace is the path's; three nodes, two replicas (an
 * autoscaled example keeps its HPA, its range bounded by the nodes); the health Service a NodePort
 * the LB probes on every node; and the lab's HAProxy and timings (test/proof/harness/scenario.ts
 * labSpec: a 0.5 s terminationDrainDuration, no Prometheus unless the path has one; HAProxy checks
 * every 2 s, p99 3 s), so a deletion takes seconds.
 */
/**
 * Slower than the lab's 300 ms checks, p99 2 s and 400 ms margin: these paths run while the rest
 * of npm test loads the same two cores (load averages near 20 were seen), where a 300 ms check
 * (and once a 1 s one) timed out on the healthy pod, leaving HAProxy no server, and a 2 s request
 * outlasted a 3 s server timeout. HAProxy's check timeout is its inter.
 */
const LAB_INTER = '2s';
const LAB_P99_SECONDS = 3;
const LAB_LB_MARGIN = '1s';

export function placedSpec(p: DeliveryPath): Record<string, unknown> {
  const example = parseYaml(readFileSync(join(REPO_ROOT, p.example), 'utf8')) as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
  const lab = (labSpec(p.setting, 2) as { spec: Record<string, unknown> }).spec;
  const spec: Record<string, unknown> = { ...example.spec };
  if ('autoscaling' in spec) {
    const a = spec.autoscaling as Record<string, unknown>;
    spec.autoscaling = { ...a, minReplicas: 2, maxReplicas: Math.min(Number(a.maxReplicas), NODES.length) };
  } else spec.replicas = 2;
  delete spec.registry;
  return {
    ...example,
    metadata: { name: example.metadata.name, namespace: p.namespace },
    spec: {
      ...spec,
      nodes: NODES.length,
      chart: { ...(example.spec.chart as Record<string, unknown>), version: p.chart === '1.31' ? '1.31.0' : p.chart },
      traffic: { longRequestP99Seconds: LAB_P99_SECONDS },
      loadBalancer: { ...(lab.loadBalancer as Record<string, unknown>), inter: LAB_INTER },
      health: { exposure: 'nodePort', port: 18180, nodePort: p.healthNodePort },
      networkPolicy: CLUSTER_NETWORK_POLICY,
      drain: { ...(lab.drain as Record<string, unknown>), lbMargin: LAB_LB_MARGIN },
      envoy: lab.envoy,
      observability: p.prometheus ? { prometheus: 'scrape-config', scrapeInterval: '1s' } : lab.observability,
    },
  };
}

export type Delivered = Installed & {
  path: DeliveryPath;
  changes: PodChanges;
  /** The gateway's own Service (traffic) and its HPA's name, where they differ from the Deployment's. */
  gatewayService: string;
  hpa?: string;
  /** The PodDisruptionBudget's name where it is not the pod changes' (istiod names the one it deploys after the Deployment). */
  pdb?: string;
  /** What was applied, for the report: the commands run. */
  commands: string[];
};

const lab = { imagePullPolicy: 'IfNotPresent' };
const GRACEGATE = join(REPO_ROOT, 'bin/gracegate.js');

/** The lab's only change to what a path produces: istio-proxy's `image: auto` pulled IfNotPresent (nothing is pulled here). */
function labPullPolicy(docs: string): string {
  return parseAllDocuments(docs)
    .map((d) => d.toJS() as Record<string, any>)
    .filter((o) => o !== null && typeof o === 'object')
    .map((o) => {
      if (o.kind === 'Deployment') {
        for (const c of o.spec.template.spec.containers as Array<Record<string, unknown>>) if (c.image === 'auto') c.imagePullPolicy = 'IfNotPresent';
      }
      return JSON.stringify(o);
    })
    .join('\n---\n');
}

/**
 * Applies the path's objects (nothing waited for): the namespace, the test app, the gateway the
 * path's way, the route. Returns what the readiness wait and the deletion need.
 */
export function deliver(p: DeliveryPath): Delivered {
  const dir = testDir(`gracegate-dp-${p.key}-`);
  const specObject = placedSpec(p);
  const specFile = join(dir, 'gateway.yaml');
  writeFileSync(specFile, yamlStringify(specObject));
  const plan = planGateway(resolveGatewaySpec(specObject, specFile));
  const changes = podChanges(plan);
  const name = changes.gateway.name;
  const ns = p.namespace;
  const commands: string[] = [];
  const out = join(dir, 'synth');
  mkdirSync(out);
  const labFile = join(dir, 'lab.yaml');
  writeFileSync(labFile, yamlStringify(lab));
  createGatewayNamespace(ns);
  kubectlApply(testAppManifests(ns));
  let deployment = name;
  let gatewayService = name;
  let hpa: string | undefined;
  let pdb: string | undefined;
  switch (p.key) {
    case 'overlay-1.27.9':
    case 'overlay-1.31': {
      gracegate(['synth', specFile, '--out', out]);
      kubectlApply(readFileSync(join(out, 'manifests.yaml'), 'utf8'));
      const which = p.key === 'overlay-1.27.9' ? 'v31' : 'v33';
      helm(['install', name, chartDir(p.chart), '-n', ns, '-f', join(out, 'values-overlay.yaml'), '-f', labFile], { helm: which });
      commands.push(
        `gracegate synth; kubectl apply -f manifests.yaml; helm ${which === 'v31' ? '3.17.3' : '4.1.4'} install -f values-overlay.yaml (istio/gateway ${p.chart})`,
      );
      break;
    }
    case 'helm3-post-render': {
      const script = join(REPO_ROOT, 'plugins/post-render/post-render.sh');
      helm(
        [
          'install',
          name,
          chartDir(p.chart),
          '-n',
          ns,
          '--set',
          'autoscaling.enabled=false',
          '-f',
          labFile,
          '--post-renderer',
          script,
          '--post-renderer-args',
          `--spec=${specFile}`,
        ],
        { helm: 'v31' },
      );
      commands.push(`helm 3.17.3 install --post-renderer plugins/post-render/post-render.sh (istio/gateway ${p.chart})`);
      break;
    }
    case 'helm4-plugin': {
      // Helm 4's own plugin directory (docs/delivery.md): a HELM_DATA_HOME of its own.
      const home = join(dir, 'helm4');
      const env = { HELM_DATA_HOME: join(home, 'data'), HELM_CONFIG_HOME: join(home, 'config'), HELM_CACHE_HOME: join(home, 'cache') };
      helm(['plugin', 'install', join(REPO_ROOT, 'plugins/post-render')], { env });
      helm(
        [
          'install',
          name,
          chartDir(p.chart),
          '-n',
          ns,
          '--set',
          'autoscaling.enabled=false',
          '-f',
          labFile,
          '--post-renderer',
          'gracegate',
          '--post-renderer-args',
          `--spec=${specFile}`,
        ],
        { env },
      );
      commands.push(`helm 4.1.4 plugin install plugins/post-render; helm install --post-renderer gracegate (istio/gateway ${p.chart})`);
      break;
    }
    case 'kustomize': {
      gracegate(['synth', specFile, '--out', out, '--kustomize']);
      const gw = join(dir, 'gw');
      mkdirSync(gw);
      const rendered = helm(['template', name, chartDir(p.chart), '-n', ns, '--set', 'autoscaling.enabled=false', '-f', labFile], { helm: 'v31' });
      writeFileSync(join(gw, 'all.yaml'), rendered);
      writeFileSync(join(gw, 'kustomization.yaml'), 'resources: [all.yaml]\ncomponents: [../synth/kustomize]\n');
      kubectl(['apply', '-k', gw]);
      commands.push(`gracegate synth --kustomize; helm template (istio/gateway ${p.chart}) > all.yaml; kubectl apply -k (the component)`);
      break;
    }
    case 'cdk8s': {
      const outdir = join(dir, 'cdk8s.out');
      const app = new App({ outdir });
      const chart = new Chart(app, 'gateway', { disableResourceNameHashes: true });
      new GracefulGateway(chart, name, { spec: specObject as never, serviceType: 'NodePort' });
      app.synth();
      const files = readdirSync(outdir).filter((f) => f.endsWith('.yaml'));
      if (files.length === 0) throw new Error(`cdk8s synth wrote no manifest into ${outdir}`);
      for (const f of files) {
        kubectl(['apply', '--server-side', '--field-manager=cdk8s-app', '-f', '-'], { input: labPullPolicy(readFileSync(join(outdir, f), 'utf8')) });
      }
      commands.push(`cdk8s App with GracefulGateway, app.synth(); kubectl apply --server-side (${files.join(', ')})`);
      break;
    }
    case 'gateway-api': {
      installGatewayApiCrds();
      gracegate(['synth', specFile, '--out', out]);
      kubectlApply(readFileSync(join(out, 'manifests.yaml'), 'utf8'));
      kubectlApply(readFileSync(join(out, 'gateway-parameters.yaml'), 'utf8'));
      const api = changes.gatewayApi!;
      deployment = api.deploymentName;
      gatewayService = api.deploymentName;
      hpa = api.deploymentName;
      pdb = api.deploymentName;
      kubectlApply(gatewayApiManifests(ns, name, api.className, api.parametersName));
      commands.push(
        `Gateway API CRDs ${GATEWAY_API_VERSION} (standard); gracegate synth; kubectl apply -f manifests.yaml -f gateway-parameters.yaml; a Gateway (class ${api.className}) naming the ConfigMap, an HTTPRoute`,
      );
      break;
    }
  }
  if (p.key !== 'gateway-api') kubectlApply(gatewayRouteManifests(ns, name, changes.selectorLabels, ns));
  return {
    path: p,
    changes,
    gatewayService,
    ...(hpa !== undefined ? { hpa } : {}),
    ...(pdb !== undefined ? { pdb } : {}),
    commands,
    options: {
      namespace: ns,
      // termination.ts addresses the Deployment by this name.
      name: deployment,
      setting: p.setting,
      replicas: 2,
      healthNodePort: p.healthNodePort,
      chart: '1.31',
    },
    dir,
    specFile,
    trafficNodePort: 0,
    healthService: changes.healthService?.name ?? '',
    selector: Object.entries(changes.selectorLabels)
      .map(([k, v]) => `${k}=${v}`)
      .join(','),
  };
}

/** Where the Gateway API's standard CRDs are: the module sigs.k8s.io/gateway-api in the cache's module cache. */
export function gatewayApiCrdDir(): string {
  const dir = join(cacheDir(), 'go', 'mod', `sigs.k8s.io/gateway-api@${GATEWAY_API_VERSION}`, 'config', 'crd', 'standard');
  try {
    readdirSync(dir);
  } catch {
    throw new Error(
      `the Gateway API CRDs are not in ${dir}: run bash scripts/prepare-test-env.sh (go mod download sigs.k8s.io/gateway-api@${GATEWAY_API_VERSION})`,
    );
  }
  return dir;
}

let crdsInstalled = false;
/** `kubectl apply --server-side` of the standard channel's CRDs, then waits until the API serves them. */
export function installGatewayApiCrds(): void {
  if (crdsInstalled) return;
  const dir = gatewayApiCrdDir();
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.yaml'))) kubectl(['apply', '--server-side', '-f', join(dir, f)]);
  kubectl(['wait', '--for=condition=Established', 'crd/gateways.gateway.networking.k8s.io', 'crd/httproutes.gateway.networking.k8s.io', '--timeout=60s'], {
    timeoutMs: 70_000,
  });
  crdsInstalled = true;
}

/** The Gateway (listener on 80, its infrastructure naming gracegate's ConfigMap) and the route to the test app. */
export function gatewayApiManifests(ns: string, name: string, className: string, parametersName: string): string {
  return [
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name, namespace: ns },
      spec: {
        gatewayClassName: className,
        infrastructure: { parametersRef: { group: '', kind: 'ConfigMap', name: parametersName } },
        listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'Same' } } }],
      },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name, namespace: ns },
      spec: {
        parentRefs: [{ name }],
        rules: [{ backendRefs: [{ name: 'testapp', port: 8080 }] }],
      },
    },
  ]
    .map((d) => JSON.stringify(d))
    .join('\n---\n');
}

/** Waits until the delivered gateway's pods are Ready (an HPA's minimum reached) and the test app too; fills in the traffic NodePort. */
export async function waitDelivered(d: Delivered, timeoutMs = 180_000): Promise<Delivered> {
  const ns = d.options.namespace;
  const want = d.changes.autoscaler?.minReplicas ?? d.changes.replicas ?? 1;
  await waitUntil(
    `the ${d.path.key} gateway's Deployment ${ns}/${d.options.name} with ${want} available pods`,
    timeoutMs,
    () => {
      const dep = kubectlJson<{ spec: { replicas?: number }; status: { availableReplicas?: number; updatedReplicas?: number; replicas?: number } }>(
        ['-n', ns, 'get', 'deployment', d.options.name],
        { allowFailure: false },
      );
      const s = dep.status;
      return dep.spec.replicas === want && s.availableReplicas === want && s.updatedReplicas === want && s.replicas === want ? true : undefined;
    },
    1000,
  );
  await waitUntil(
    `the test app in ${ns}`,
    60_000,
    () => {
      const dep = kubectlJson<{ status: { availableReplicas?: number } }>(['-n', ns, 'get', 'deployment', 'testapp']);
      return (dep.status.availableReplicas ?? 0) >= 1 ? true : undefined;
    },
    1000,
  );
  const svc = kubectlJson<{ spec: { ports: Array<{ port: number; nodePort?: number }> } }>(['-n', ns, 'get', 'service', d.gatewayService]);
  const trafficNodePort = svc.spec.ports.find((x) => x.port === 80)?.nodePort;
  if (!trafficNodePort) throw new Error(`service ${ns}/${d.gatewayService} has no NodePort for port 80`);
  d.trafficNodePort = trafficNodePort;
  return d;
}

/** Removes the path's namespace (and release); does not wait for the pods to go. */
/** Removes a delivered path's namespace, its pods without their grace periods (their deletions under load ran in the tests). */
export function removeDelivered(d: Delivered): void {
  deleteNamespacesNow([d.options.namespace]);
  rmSync(d.dir, { recursive: true, force: true });
}

/** The application's host name behind the gateway, for the record. */
export const appHost = (ns: string): string => `testapp.${ns}.svc.${CLUSTER_DOMAIN}`;

export { GRACEGATE };

/**
 * examples/app-workload.yaml placed on the cluster: the test app behind a delivered gateway is the
 * workload (its Deployment `testapp`, container `testapp`), two replicas, requests up to 3 s, and
 * no graceful shutdown (the test app exits at SIGTERM, so the plan's preStop covers the requests in
 * flight too). Delivered by `gracegate post-render --spec` over the test app's own manifests,
 * applied with kubectl.
 */
export function placedWorkloadSpec(namespace: string): Record<string, unknown> {
  const example = parseYaml(readFileSync(join(REPO_ROOT, 'examples/app-workload.yaml'), 'utf8')) as { spec: Record<string, unknown> };
  const { shutdownTimeout: _unused, ...app } = example.spec.app as Record<string, unknown>;
  return {
    ...example,
    metadata: { name: 'testapp', namespace },
    spec: {
      ...example.spec,
      workload: { ...(example.spec.workload as Record<string, unknown>), container: 'testapp' },
      replicas: 2,
      traffic: { longRequestP99Seconds: 2, maxRequestSeconds: 3 },
      app: { ...app, gracefulShutdown: false },
    },
  };
}

export type DeliveredWorkload = { specFile: string; changes: WorkloadChanges; namespace: string; selector: string };

/** Post-renders the test app's manifests in `namespace` with the workload spec and applies them; resolves when the rollout is done. */
export async function deliverWorkload(namespace: string, dir: string): Promise<DeliveredWorkload> {
  const spec = placedWorkloadSpec(namespace);
  const specFile = join(dir, 'workload.yaml');
  writeFileSync(specFile, yamlStringify(spec));
  const changes = workloadChanges(planWorkload(resolveWorkloadSpec(spec, specFile)));
  const rendered = run(process.execPath, [GRACEGATE, 'post-render', '--spec', specFile], { input: testAppManifests(namespace), timeoutMs: 60_000 });
  kubectlApply(rendered);
  kubectl(['-n', namespace, 'rollout', 'status', 'deployment/testapp', '--timeout=120s'], { timeoutMs: 130_000 });
  return {
    specFile,
    changes,
    namespace,
    selector: Object.entries(changes.selectorLabels)
      .map(([k, v]) => `${k}=${v}`)
      .join(','),
  };
}
