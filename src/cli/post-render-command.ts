import { MANIFESTS_MAX_BYTES, readBounded } from '../bounded-read';
import { loadPodChanges } from './load-pod-changes';
import { postRender } from '../inject/post-render';
import { parseLabelSelector, TargetRule } from '../inject/target';
import { runParsedCommand, UsageError } from './args';

const USAGE = `usage: gracegate post-render --spec <gateway.yaml> [--target-name NAME | --target-selector k=v[,k=v]]
                             [--image IMAGE] < rendered.yaml > out.yaml

Helm post-renderer: reads rendered manifests on stdin, puts the plan's pod changes into the
gateway Deployment (hc sidecar, istio-proxy hold, volumes, grace period, strategy, anti-affinity,
pod annotations) and appends the hc ConfigMap, health Service and PDB. Idempotent. With
spec.autoscaling the chart's HPA is kept and gets the spec's range; the Deployment gets no replicas.
For spec.chart.kind gateway-api the input holds the Gateway: it gets the parametersRef, and the
parameters ConfigMap, the hc ConfigMap and the health Service are appended.

  --spec FILE              the GracefulGateway spec (required)
  --target-name NAME       the gateway Deployment by name
  --target-selector k=v    the gateway Deployment by labels (its own or its pod template's)
                           default: the Deployment with a container named spec.envoy.containerName (istio-proxy)
  --image IMAGE            the gracegate image for the sidecar (default: ghcr.io/gracegate/gracegate:<version>)

Helm 3: helm template|install ... --post-renderer gracegate --post-renderer-args post-render --post-renderer-args --spec=gateway.yaml
Exit status: 0 written, 2 bad arguments or input (message on stderr, nothing on stdout).
`;

function readStdin(): string {
  try {
    return readBounded(0, MANIFESTS_MAX_BYTES, 'the rendered manifests on stdin');
  } catch (err) {
    // No stdin at all (closed descriptor) reads as an empty input.
    if ((err as NodeJS.ErrnoException).code === 'EBADF') return '';
    throw err; // InputTooLargeError is a GracegateError: main.ts prints it, exit 2
  }
}

export async function run(args: string[]): Promise<number> {
  return runParsedCommand(USAGE, args, {
    spec: { type: 'string' },
    'target-name': { type: 'string' },
    'target-selector': { type: 'string' },
    'keep-replicas': { type: 'boolean' },
    image: { type: 'string' },
  }, false, async ({ values }) => {
    const specPath = values.spec as string | undefined;
    if (!specPath) throw new UsageError('missing --spec <gateway.yaml>');
    if (values['keep-replicas'] === true) {
      throw new UsageError('--keep-replicas is gone: describe the HPA in the spec (spec.autoscaling {minReplicas, maxReplicas}); post-render then keeps the HPA and never sets replicas');
    }
    if (values['target-name'] !== undefined && values['target-selector'] !== undefined) {
      throw new UsageError('give --target-name or --target-selector, not both');
    }
    const log = (line: string) => process.stderr.write(`gracegate post-render: ${line}\n`);
    const changes = loadPodChanges(specPath, { log, ...(values.image !== undefined ? { image: values.image as string } : {}) });
    const target = values['target-name'] !== undefined
      ? TargetRule.name(values['target-name'] as string)
      : values['target-selector'] !== undefined
        ? TargetRule.labels(parseLabelSelector(values['target-selector'] as string))
        : TargetRule.container(changes.proxy.containerName);
    process.stdout.write(postRender(readStdin(), changes, { target }));
    return 0;
  });
}
