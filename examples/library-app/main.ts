/**
 * A user's own cdk8s app using gracegate as a library: the planner to check the numbers, the
 * GracefulGateway construct to emit the gateway. In a user's repo the import is
 *
 *   import { GracefulGateway, parseGatewaySpec, planGateway } from 'gracegate';
 *
 * Inside this repo the package is not installed under its own name, so the import goes to the
 * same entry (`src/index.ts`, compiled to package.json's `main`, dist/src/index.js) by path. A
 * `paths` mapping would compile but leave a `require('gracegate')` that fails at run time.
 *
 * Run: npm run build && CDK8S_OUTDIR=cdk8s.out/library-app node dist/examples/library-app/main.js
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { GracefulGateway, parseGatewaySpec, planGateway } from '../../src/index';

/** The team's chart: one gateway, plus whatever else the team deploys next to it. */
export class EdgeChart extends Chart {
  readonly gateway: GracefulGateway;

  constructor(scope: Construct, id: string, specFile: string) {
    super(scope, id);
    const spec = parseGatewaySpec(readFileSync(specFile, 'utf8'), specFile);
    // The planner alone, e.g. to fail CI on a grace period the platform team does not allow.
    const plan = planGateway(spec);
    if (plan.timings.terminationGracePeriodSeconds > 600) {
      throw new Error(`${specFile}: grace period ${plan.timings.terminationGracePeriodSeconds}s is over the platform's 600s`);
    }
    this.gateway = new GracefulGateway(this, 'public', { spec, image: 'registry.example.com/gracegate:0.1.0' });
  }
}

if (require.main === module) {
  const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'dist/library-app' });
  new EdgeChart(app, 'edge', process.argv[2] ?? join(__dirname, '..', '..', '..', 'examples', 'haproxy.yaml'));
  app.synth();
}
