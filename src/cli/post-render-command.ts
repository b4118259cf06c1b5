import { MANIFESTS_MAX_BYTES, readBounded } from '../core/bounded-read';
import { loadChangesOfSpec, PlanRefusedError, reportRefused } from './load-pod-changes';
import { postRenderStream } from '../delivery/registry';
import { parseLabelSelector, TargetRule } from '../delivery/target';
import { failOnFlag, runParsedCommand, UsageError } from './args';

const USAGE = `usage: gracegate post-render --spec <spec.yaml> [--target-name NAME | --target-selector k=v[,k=v]]
                             [--image IMAGE] [--keep-replicas] [--fail-on error|warning|info|none]
                             < rendered.yaml > out.yaml

Helm post-renderer: reads rendered manifests on stdin and puts the plan's pod changes into the
target workload. Idempotent.
  GracefulGateway: the gateway Deployment gets the hc sidecar, istio-proxy hold, volumes, grace
  period, strategy, anti-affinity and pod annotations; the hc ConfigMap, health Service and PDB are
  appended. With spec.autoscaling the chart's HPA is kept and gets the spec's range; the Deployment
  gets no replicas. For spec.chart.kind gateway-api the input holds the Gateway: it gets the
  parametersRef, and the parameters ConfigMap, the hc ConfigMap and the health Service are appended.
  GracefulWorkload: the Deployment or StatefulSet named metadata.name gets the app container's
  preStop and shutdown timeout, the grace period, strategy and anti-affinity; its PDB is appended.

  --spec FILE              the GracefulGateway or GracefulWorkload spec (required)
  --target-name NAME       the target workload by name
  --target-selector k=v    the target by labels (its own or its pod template's)
                           default: a gateway's Deployment with a container named spec.envoy.containerName
                           (istio-proxy); a workload's object named metadata.name
  --image IMAGE            the gracegate image for a gateway's sidecar (default: ghcr.io/gracegate/gracegate:<version>)
  --keep-replicas          GracefulWorkload only: leave spec.replicas to an HPA (a gateway describes its HPA in spec.autoscaling)
  --fail-on SEV            write nothing when a plan finding reaches SEV, as synth (default error; none: always write)

Helm 3: helm template|install ... --post-renderer gracegate --post-renderer-args post-render --post-renderer-args --spec=gateway.yaml
On bad input the message is on stderr and nothing is on stdout.
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
  return runParsedCommand(
    USAGE,
    args,
    {
      spec: { type: 'string' },
      'target-name': { type: 'string' },
      'target-selector': { type: 'string' },
      'keep-replicas': { type: 'boolean' },
      image: { type: 'string' },
      'fail-on': { type: 'string', default: 'error' },
    },
    false,
    async ({ values }) => {
      const specPath = values.spec as string | undefined;
      if (!specPath) throw new UsageError('missing --spec <spec.yaml>');
      if (values['target-name'] !== undefined && values['target-selector'] !== undefined) {
        throw new UsageError('give --target-name or --target-selector, not both');
      }
      const log = (line: string) => process.stderr.write(`gracegate post-render: ${line}\n`);
      const failOn = failOnFlag(values['fail-on'] as string);
      let loaded: ReturnType<typeof loadChangesOfSpec>;
      try {
        loaded = loadChangesOfSpec(specPath, { log, failOn, ...(values.image !== undefined ? { image: values.image as string } : {}) });
      } catch (err) {
        if (err instanceof PlanRefusedError) return reportRefused('post-render', err, 'pass --fail-on none');
        throw err;
      }
      const chosen =
        values['target-name'] !== undefined
          ? TargetRule.name(values['target-name'] as string)
          : values['target-selector'] !== undefined
            ? TargetRule.labels(parseLabelSelector(values['target-selector'] as string))
            : undefined;
      const keepReplicas = values['keep-replicas'] === true;
      if (loaded.kind === 'GracefulGateway' && keepReplicas) {
        throw new UsageError(
          '--keep-replicas is gone: describe the HPA in the spec (spec.autoscaling {minReplicas, maxReplicas}); post-render then keeps the HPA and never sets replicas (--keep-replicas is for GracefulWorkload specs only)',
        );
      }
      process.stdout.write(postRenderStream(readStdin(), loaded, { target: chosen, keepReplicas }));
      return 0;
    },
  );
}
