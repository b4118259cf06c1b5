/**
 * An application team's cdk8s app: the Deployment built with cdk8s-plus-28 as usual (container,
 * port, readiness probe, resources, a Service), then made graceful by gracegate from the
 * GracefulWorkload spec in examples/app-workload.yaml. In a user's repo the import is
 *
 *   import { GracefulWorkload, parseWorkloadSpec } from 'gracegate';
 *
 * (here it goes to the same entry by path: see examples/library-app/main.ts).
 *
 * Run: npm run build && CDK8S_OUTDIR=cdk8s.out/cdk8s-plus-app node dist/examples/cdk8s-plus-app/main.js
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Chart, Duration, Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { GracefulWorkload, parseWorkloadSpec } from '../../src/index';

export class InferenceChart extends Chart {
  readonly deployment: kplus.Deployment;
  readonly graceful: GracefulWorkload;

  constructor(scope: Construct, id: string, specFile: string) {
    super(scope, id, { namespace: 'ml' });
    this.deployment = new kplus.Deployment(this, 'api', {
      metadata: { name: 'inference-api' },
      containers: [
        {
          name: 'api',
          image: 'registry.example.com/inference-api:1.4.2',
          portNumber: 8080,
          readiness: kplus.Probe.fromHttpGet('/health', { port: 8080, periodSeconds: Duration.seconds(3) }),
          resources: {
            cpu: { request: kplus.Cpu.millis(500), limit: kplus.Cpu.millis(2000) },
            memory: { request: Size.mebibytes(512), limit: Size.gibibytes(2) },
          },
          securityContext: { user: 65532, group: 65532 },
        },
      ],
    });
    this.deployment.exposeViaService({ name: 'inference-api', ports: [{ port: 80, targetPort: 8080 }] });
    // The preStop, shutdown timeout, grace period, strategy and PodDisruptionBudget come from the plan.
    this.graceful = GracefulWorkload.of(this.deployment, parseWorkloadSpec(readFileSync(specFile, 'utf8'), specFile));
  }
}

if (require.main === module) {
  const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'cdk8s.out/cdk8s-plus-app' });
  new InferenceChart(app, 'inference', process.argv[2] ?? join(__dirname, '..', '..', '..', 'examples', 'app-workload.yaml'));
  app.synth();
}
