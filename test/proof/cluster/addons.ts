/**
 * What runs on the cluster before any test: CoreDNS (the cluster's names, nothing forwarded),
 * Istio (istio-base and istiod from the Istio source the build fetched, with real helm), and by
 * default a gateway planned from examples/haproxy.yaml (its values overlay, manifests.yaml and the
 * routes to the test app), all with real helm and kubectl.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/repo';
import { helm, kubectl, kubectlApply } from './kubectl';
import { CLUSTER_DOMAIN, DNS_SERVICE_IP, HUB, IMAGE_TAG, IMAGES, proxyImage } from './layout';
import { createGatewayNamespace } from './pod-security';
import { run } from './sh';

const yaml = (docs: unknown[]): string => docs.map((d) => JSON.stringify(d)).join('\n---\n');

const COREFILE = `.:53 {
    errors
    health :8080
    ready :8181
    kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    template ANY ANY {
        rcode NXDOMAIN
    }
}
`;

export function coreDnsManifests(): string {
  const labels = { 'k8s-app': 'kube-dns' };
  return yaml([
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'coredns', namespace: 'kube-system' } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'system:coredns' },
      rules: [
        { apiGroups: [''], resources: ['endpoints', 'services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'system:coredns' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
      subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: 'kube-system' }],
    },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'coredns', namespace: 'kube-system' }, data: { Corefile: COREFILE } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'coredns', namespace: 'kube-system', labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: 'coredns',
            dnsPolicy: 'Default',
            securityContext: { sysctls: [{ name: 'net.ipv4.ip_unprivileged_port_start', value: '0' }] },
            containers: [
              {
                name: 'coredns',
                image: IMAGES.coredns,
                imagePullPolicy: 'IfNotPresent',
                args: ['-conf', '/etc/coredns/Corefile'],
                ports: [
                  { name: 'dns', containerPort: 53, protocol: 'UDP' },
                  { name: 'dns-tcp', containerPort: 53, protocol: 'TCP' },
                ],
                readinessProbe: { httpGet: { path: '/ready', port: 8181 }, periodSeconds: 2 },
                livenessProbe: { httpGet: { path: '/health', port: 8080 }, periodSeconds: 10 },
                resources: { requests: { cpu: '10m', memory: '32Mi' } },
                securityContext: {
                  runAsNonRoot: true,
                  runAsUser: 65534,
                  allowPrivilegeEscalation: false,
                  capabilities: { drop: ['ALL'] },
                  readOnlyRootFilesystem: true,
                },
                volumeMounts: [{ name: 'config', mountPath: '/etc/coredns', readOnly: true }],
              },
            ],
            volumes: [{ name: 'config', configMap: { name: 'coredns' } }],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'kube-dns', namespace: 'kube-system', labels },
      spec: {
        selector: labels,
        clusterIP: DNS_SERVICE_IP,
        ports: [
          { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
          { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
        ],
      },
    },
  ]);
}

export async function installCoreDns(): Promise<void> {
  kubectlApply(coreDnsManifests());
  kubectl(['-n', 'kube-system', 'rollout', 'status', 'deployment/coredns', '--timeout=120s'], { timeoutMs: 130_000 });
}

/** istiod's values: where the images are, the three settings upstream Envoy needs, and the Gateway resources scoped to their namespace. */
export function istiodValues(envoyVersion?: string): Record<string, unknown> {
  return {
    global: { hub: HUB, tag: IMAGE_TAG, imagePullPolicy: 'IfNotPresent', proxy: { image: proxyImage(envoyVersion) } },
    pilot: {
      autoscaleEnabled: false,
      env: {
        // Upstream Envoy lacks Istio's own filters: without these, istiod's config is rejected.
        PILOT_ENABLE_METADATA_EXCHANGE: 'false',
        PILOT_ENABLE_ALPN_FILTER: 'false',
        // The tests run gateways of the same labels (istio: igw) in several namespaces at once, each
        // with its own Gateway resource and test app. By default istiod applies a Gateway resource to
        // every pod its selector matches, in any namespace: the routes merged, one namespace's gateway
        // sent requests to another's app, and that app's teardown was a burst of 503s in a run that
        // had nothing to do with it. Scoped, each gateway takes only its own namespace's Gateways, as
        // a cluster of several teams' gateways would be set up.
        PILOT_SCOPE_GATEWAY_TO_NAMESPACE: 'true',
      },
    },
    telemetry: { enabled: false },
  };
}

export const ISTIO_CHARTS = (bin: string) => ({
  base: join(bin, 'istio/base'),
  istiod: join(bin, 'istio/istio-discovery'),
  gateway: join(bin, 'istio/gateway'),
});

export async function installIstio(bin: string): Promise<void> {
  const charts = ISTIO_CHARTS(bin);
  const dir = mkdtempSync(join(tmpdir(), 'gracegate-istio-'));
  try {
    const values = join(dir, 'istiod.json');
    writeFileSync(values, JSON.stringify(istiodValues()));
    kubectl(['create', 'namespace', 'istio-system'], { allowFailure: true });
    helm(['upgrade', '--install', 'istio-base', charts.base, '-n', 'istio-system', '--wait', '--timeout', '120s']);
    helm(['upgrade', '--install', 'istiod', charts.istiod, '-n', 'istio-system', '-f', values]);
    kubectl(['-n', 'istio-system', 'rollout', 'status', 'deployment/istiod', '--timeout=180s'], { timeoutMs: 190_000 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The test app behind every gateway: a Deployment and Service in `namespace`, one replica a node. */
export function testAppManifests(namespace: string, replicas = 2): string {
  const labels = { app: 'testapp' };
  return yaml([
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'testapp', namespace, labels },
      spec: {
        replicas,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            containers: [
              {
                name: 'testapp',
                image: IMAGES.testapp,
                imagePullPolicy: 'IfNotPresent',
                ports: [{ name: 'http', containerPort: 8080 }],
                readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 2 },
                resources: { requests: { cpu: '10m', memory: '16Mi' } },
                securityContext: {
                  runAsNonRoot: true,
                  runAsUser: 65534,
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  capabilities: { drop: ['ALL'] },
                },
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'testapp', namespace, labels },
      spec: { selector: labels, ports: [{ name: 'http', port: 8080, targetPort: 8080 }] },
    },
  ]);
}

/** An Istio Gateway on port 80 of the gateway pods `selector` selects, and a route to the test app. */
export function gatewayRouteManifests(namespace: string, name: string, selector: Record<string, string>, appNamespace: string): string {
  return yaml([
    {
      apiVersion: 'networking.istio.io/v1',
      kind: 'Gateway',
      metadata: { name, namespace },
      spec: { selector, servers: [{ port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts: ['*'] }] },
    },
    {
      apiVersion: 'networking.istio.io/v1',
      kind: 'VirtualService',
      metadata: { name, namespace },
      spec: {
        hosts: ['*'],
        gateways: [`${namespace}/${name}`],
        http: [{ route: [{ destination: { host: `testapp.${appNamespace}.svc.${CLUSTER_DOMAIN}`, port: { number: 8080 } } }] }],
      },
    },
  ]);
}

/**
 * The gateway `up` installs: examples/haproxy.yaml through `gracegate synth`, its values overlay on
 * the istio/gateway chart of the Istio source, its manifests.yaml, and the route to the test app.
 */
export async function installDefaultGateway(): Promise<void> {
  const out = mkdtempSync(join(tmpdir(), 'gracegate-synth-'));
  try {
    run(process.execPath, [join(REPO_ROOT, 'bin/gracegate.js'), 'synth', join(REPO_ROOT, 'examples/haproxy.yaml'), '--out', out]);
    const ns = 'istio-ingress';
    createGatewayNamespace(ns);
    kubectlApply(testAppManifests(ns));
    kubectlApply(readFileSync(join(out, 'manifests.yaml'), 'utf8'));
    // The only value of the lab's own: image `auto` would be pulled Always (no tag), and nothing is pulled here.
    writeFileSync(join(out, 'lab.json'), JSON.stringify({ imagePullPolicy: 'IfNotPresent' }));
    const { chartDir } = await import('./charts');
    helm(['upgrade', '--install', 'igw-public', chartDir('1.27.9'), '-n', ns, '-f', join(out, 'values-overlay.yaml'), '-f', join(out, 'lab.json')]);
    kubectlApply(gatewayRouteManifests(ns, 'igw-public', { istio: 'igw-public' }, ns));
    kubectl(['-n', ns, 'rollout', 'status', 'deployment/igw-public', '--timeout=180s'], { timeoutMs: 190_000 });
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
