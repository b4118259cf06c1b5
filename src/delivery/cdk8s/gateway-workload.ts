import type { K8sObject } from '../../pod/k8s';
import { MANAGED_BY_LABEL } from '../../pod/names';
import type { PodChanges } from '../../pod/pod-changes';
import { type GatewayServicePort, withHealthPort } from '../service-patch';

export type { GatewayServicePort } from '../service-patch';
export { DEFAULT_GATEWAY_PORTS } from '../service-patch';

/**
 * A gateway Deployment as the istio/gateway chart renders it, before gracegate: one `istio-proxy`
 * container with `image: auto`, which Istio's injection webhook fills in (keeping the fields set
 * here, such as the preStop hold), the gateway injection template, and the sysctl that lets a
 * non-root Envoy bind 80/443.
 */
export function baseGatewayDeployment(changes: PodChanges, serviceAccountName: string): K8sObject {
  const { name, namespace } = changes.gateway;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { ...changes.selectorLabels, 'app.kubernetes.io/name': name, ...MANAGED_BY_LABEL } },
    spec: {
      selector: { matchLabels: { ...changes.selectorLabels } },
      template: {
        metadata: {
          annotations: {
            'inject.istio.io/templates': 'gateway',
            'prometheus.io/port': '15020',
            'prometheus.io/scrape': 'true',
            'prometheus.io/path': '/stats/prometheus',
          },
          labels: { ...changes.selectorLabels, 'sidecar.istio.io/inject': 'true', 'app.kubernetes.io/name': name },
        },
        spec: {
          serviceAccountName,
          securityContext: { sysctls: [{ name: 'net.ipv4.ip_unprivileged_port_start', value: '0' }] },
          containers: [
            {
              name: changes.proxy.containerName,
              image: 'auto',
              securityContext: {
                capabilities: { drop: ['ALL'] },
                allowPrivilegeEscalation: false,
                privileged: false,
                readOnlyRootFilesystem: true,
                runAsUser: 1337,
                runAsGroup: 1337,
                runAsNonRoot: true,
              },
              ports: [{ containerPort: 15090, protocol: 'TCP', name: 'http-envoy-prom' }],
              resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '2000m', memory: '1024Mi' } },
            },
          ],
        },
      },
    },
  };
}

/** The gateway's own Service (the one the LB sends traffic to), with the pod changes' annotations. */
export function gatewayServiceObject(changes: PodChanges, type: 'LoadBalancer' | 'NodePort' | 'ClusterIP', ports: readonly GatewayServicePort[]): K8sObject {
  const { name, namespace } = changes.gateway;
  const annotations = changes.gatewayServiceAnnotations;
  const listed = ports.map((p) => ({ name: p.name, port: p.port, targetPort: p.targetPort, protocol: p.protocol ?? 'TCP' }));
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name,
      namespace,
      labels: { ...changes.selectorLabels, ...MANAGED_BY_LABEL },
      ...(Object.keys(annotations).length > 0 ? { annotations: { ...annotations } } : {}),
    },
    spec: {
      type,
      ...(changes.gatewayServiceTrafficPolicy && type !== 'ClusterIP' ? { externalTrafficPolicy: changes.gatewayServiceTrafficPolicy } : {}),
      selector: { ...changes.selectorLabels },
      // The sidecar's health port, where the plan puts it on this Service (one slice with the traffic);
      // a ClusterIP Service gets none, and without a planned port the given ports stand as they are.
      ports: changes.gatewayServiceHealthPort ? withHealthPort(listed, type !== 'ClusterIP' ? changes.gatewayServiceHealthPort : null) : listed,
    },
  };
}

export function serviceAccountObject(changes: PodChanges, name: string): K8sObject {
  return {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name, namespace: changes.gateway.namespace, labels: { ...changes.selectorLabels, ...MANAGED_BY_LABEL } },
  };
}
