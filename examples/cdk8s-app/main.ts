/**
 * A cdk8s app using gracegate as a library: one gateway behind HAProxy in a home lab
 * (examples/haproxy.yaml), written as code. In your own app, import from 'gracegate'.
 *
 *   npm run build && npx cdk8s synth --check-upgrade=false   # plain manifests into cdk8s.out/ (see cdk8s.yaml)
 *   node dist/examples/cdk8s-app/synth-helm-chart.js   # regenerate charts/gracegate-example/
 */
import { App, Chart } from 'cdk8s';
import { GracefulGateway } from '../../src';

/** The chart name the example is published under (charts/<name>/). */
export const EXAMPLE_CHART_NAME = 'gracegate-example';

export function buildExampleApp(outdir?: string): App {
  // cdk8s-cli passes the output directory in CDK8S_OUTDIR; run by hand, write to cdk8s.out/ as it
  // does (never dist/, the TypeScript build's output, nor out/, which `gracegate synth --out out` owns).
  const app = new App({ outdir: outdir ?? process.env.CDK8S_OUTDIR ?? 'cdk8s.out' });
  const chart = new Chart(app, EXAMPLE_CHART_NAME, { disableResourceNameHashes: true });
  new GracefulGateway(chart, 'igw-public', {
    spec: {
      apiVersion: 'gracegate.dev/v1alpha1',
      kind: 'GracefulGateway',
      metadata: { name: 'igw-public', namespace: 'istio-ingress' },
      spec: {
        replicas: 2,
        nodes: 3, // a spare node: the rollout surges one pod first
        // GracefulGateway renders the Deployment itself; the chart block only matters to `gracegate synth`.
        chart: { kind: 'additional-containers', version: '0.1.0' },
        traffic: { longRequestP99Seconds: 100 },
        loadBalancer: { model: 'haproxy', inter: '2s', fall: 2, onMarkedDown: 'shutdown-sessions', retries: 3, redispatch: true },
        health: { exposure: 'nodePort', port: 18180, nodePort: 30180 },
      },
    },
  });
  return app;
}

if (require.main === module) buildExampleApp().synth();
