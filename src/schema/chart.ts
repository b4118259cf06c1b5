import { z } from 'zod';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * The first Istio version whose deployment controller applies a parameters ConfigMap
 * (`spec.infrastructure.parametersRef`) and class defaults (`gateway.istio.io/defaults-for-class`):
 * istio/istio#55283, first tagged in 1.26.0 (pilot/pkg/config/kube/gateway/deploymentcontroller.go).
 */
export const GATEWAY_API_PARAMETERS_SINCE = { major: 1, minor: 26 } as const;

const gatewayRef = z.strictObject({
  name: z.string().regex(DNS_LABEL, 'must be a DNS label (lower case, digits, -)').max(63),
  namespace: z.string().regex(DNS_LABEL, 'must be a DNS label (lower case, digits, -)').max(63),
});

/**
 * Class-wide mode: the same patches for every Gateway of the class, as the ConfigMap istiod reads
 * for the class (labelled `gateway.istio.io/defaults-for-class`, in istiod's own namespace).
 */
const defaultsForClassSchema = z.strictObject({
  /** istiod's namespace: istiod reads class defaults only from there. @default istio-system. */
  systemNamespace: z
    .string()
    .regex(DNS_LABEL)
    .max(63)
    .default('istio-system')
    .describe("istiod's namespace, where class defaults must live; default istio-system"),
  /** The Gateways of the class that get a health Service and the hc ConfigMap in manifests.yaml. */
  gateways: z.array(gatewayRef).min(1).describe('the Gateways of the class (name, namespace): each gets its health Service and the hc ConfigMap'),
});

/**
 * What deploys the gateway pods, so gracegate knows how to deliver the pod changes:
 * `istio-gateway` (the istio/gateway Helm chart, values overlay), `additional-containers` (an
 * in-house chart with an additionalContainers hook), `gateway-api` (istiod deploys the pods for a
 * Kubernetes Gateway; the changes go into the ConfigMap its deployment controller applies).
 */
export const chartSchema = z
  .strictObject({
    kind: z
      .enum(['istio-gateway', 'additional-containers', 'gateway-api'])
      .describe('istio-gateway (istio/gateway chart) | additional-containers (an in-house chart) | gateway-api (istiod deploys the pods of a Gateway)'),
    /** Chart version; for gateway-api, the Istio (istiod) version. */
    version: z
      .string()
      .regex(/^\d+\.\d+(\.\d+)?([-+].*)?$/, 'must look like 1.27.9')
      .describe('chart version; for gateway-api the Istio version'),
    /** gateway-api only: the Gateway's `gatewayClassName`. @default istio (istiod's own class). */
    gatewayClassName: z.string().regex(DNS_LABEL).max(63).optional().describe('gateway-api only: the GatewayClass; default istio'),
    /** gateway-api only: write the class-wide defaults ConfigMap instead of one Gateway's parameters. */
    defaultsForClass: defaultsForClassSchema.optional().describe('gateway-api only: patch every Gateway of the class (gateway.istio.io/defaults-for-class)'),
  })
  .superRefine((chart, ctx) => {
    if (chart.kind !== 'gateway-api') {
      for (const key of ['gatewayClassName', 'defaultsForClass'] as const) {
        if (chart[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: `only used with kind gateway-api (kind is ${chart.kind})` });
      }
      return;
    }
    const m = typeof chart.version === 'string' ? /^(\d+)\.(\d+)/.exec(chart.version) : null;
    const [major, minor] = m ? [Number(m[1]), Number(m[2])] : [Infinity, 0];
    const since = GATEWAY_API_PARAMETERS_SINCE;
    if (major < since.major || (major === since.major && minor < since.minor)) {
      ctx.addIssue({
        code: 'custom',
        path: ['version'],
        message: `Istio ${chart.version} cannot carry the pod changes: istiod applies a parameters ConfigMap (spec.infrastructure.parametersRef, gateway.istio.io/defaults-for-class) only from ${GATEWAY_API_PARAMETERS_SINCE.major}.${GATEWAY_API_PARAMETERS_SINCE.minor} (istio/istio#55283); upgrade istiod, or deploy the gateway with the istio/gateway chart (kind istio-gateway)`,
      });
    }
  });

export type ChartSpec = z.output<typeof chartSchema>;

/** The Gateway API class name the spec names, with istiod's default. */
export const DEFAULT_GATEWAY_CLASS = 'istio';
