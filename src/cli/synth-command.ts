import { join } from 'node:path';
import { containerdFiles } from '../emit/containerd';
import { kustomizeComponent } from '../emit/kustomize';
import { manifestsYaml } from '../emit/manifests';
import { healthNetworkPolicyYaml } from '../emit/health-network-policy';
import { monitoringFiles } from '../emit/monitoring';
import { renderPlanMarkdown } from '../emit/plan-markdown';
import { OverlayUnsupportedError, valuesOverlayYaml } from '../emit/values-overlay';
import { GracegateError } from '../errors';
import { blockingFindings, type FailOn } from '../plan/finding';
import { planGateway } from '../plan/plan-gateway';
import { podChanges, type PodChanges } from '../pod/pod-changes';
import type { GatewaySpec } from '../schema/gateway-spec';
import { failOnFlag, runParsedCommand, UsageError } from './args';
import { loadAnySpecFile } from './load-spec-file';
import { writeSynthOutput } from './synth-output';
import { renderWorkload } from './synth-workload';

const USAGE = `usage: gracegate synth <spec.yaml> --out DIR [--image IMAGE] [--fail-on error|warning|info|none]

For a GracefulWorkload: DIR/manifests.yaml (its PodDisruptionBudget), DIR/plan.json, DIR/PLAN.md and,
with --kustomize, DIR/kustomize/ (the patch for its Deployment or StatefulSet); or deliver the same
changes with 'gracegate post-render --spec <spec.yaml>'.
For a GracefulGateway, everything needed to run the gateway with the hc sidecar:
  DIR/values-overlay.yaml   Helm values for the chart in spec.chart (pass it last with -f)
  DIR/manifests.yaml        hc ConfigMap, health Service, PodDisruptionBudget (kubectl apply -f)
  DIR/network-policy.yaml   recommended: the health port for the LB only, the witness port for the
                            node only (fill in the LB's addresses first; not in manifests.yaml)
  DIR/containerd/           certs.d hosts.toml, config_path snippets, kubespray vars (only with spec.registry)
  DIR/plan.json, PLAN.md    the plan, for the reviewer
  DIR/prometheus-rules.yaml the alerts (PrometheusRule, or a rule file with observability.prometheus scrape-config)
  DIR/pod-monitor.yaml      the PodMonitor (observability.prometheus operator, the default)
  DIR/prometheus-scrape.yaml  a scrape_configs job instead (observability.prometheus scrape-config)
  DIR/grafana-dashboard.json  the dashboard (none of these four with observability.prometheus none)
  DIR/kustomize/            with --kustomize: a Kustomize component doing the same injection

Only once everything is rendered is anything written: on bad input nothing is. DIR may hold other
files: synth replaces only the files it wrote before (listed in DIR/.gracegate-synth.json), deletes
only those it no longer writes, and refuses (writing nothing) to replace a file it did not write.
  --kustomize     also write the Kustomize component (list DIR/kustomize under components:)
  --image IMAGE   the hc sidecar image (default ghcr.io/gracegate/gracegate:<version>)
  --fail-on SEV   write nothing when a plan finding reaches SEV (default error; none: always write)
Exit status: 0 written, 1 a finding at or above --fail-on (nothing written), 2 bad input.
`;

/**
 * The values overlay, or none when the chart cannot carry it and the Kustomize component (which
 * does the same injection on the rendered chart) was asked for instead.
 */
function overlayFile(changes: PodChanges, chart: GatewaySpec['spec']['chart'], kustomize: boolean): Record<string, string> {
  try {
    return { 'values-overlay.yaml': valuesOverlayYaml(changes, chart) };
  } catch (err) {
    if (!(err instanceof OverlayUnsupportedError) || !kustomize) throw err;
    process.stderr.write(`gracegate synth: no values-overlay.yaml (${chart.kind} ${chart.version} cannot carry it); the Kustomize component in kustomize/ does the injection\n`);
    return {};
  }
}

/** Renders every output file (relative path → content) in memory; throws a GracegateError on bad input. */
function render(specPath: string, image: string | undefined, failOn: FailOn, kustomize = false): { files: Record<string, string>; blocked?: string } {
  const spec = loadAnySpecFile(specPath);
  if (spec.kind === 'GracefulWorkload') return renderWorkload(specPath, spec.resolved, failOn, kustomize);
  const resolved = spec.resolved;
  const plan = planGateway(resolved);
  const blocking = blockingFindings(plan.findings, failOn);
  if (blocking.length > 0) {
    const lines = blocking.map((f) => `${specPath}: ${f.severity} ${f.id} (${f.field}): ${f.message}\n  fix: ${f.remediation}`);
    return { files: {}, blocked: `${lines.join('\n')}\ngracegate synth: nothing written; fix the finding(s) above, or pass --fail-on none to write anyway\n` };
  }
  try {
    const changes = podChanges(plan, image !== undefined ? { image } : {});
    const files: Record<string, string> = {
      ...overlayFile(changes, resolved.spec.spec.chart, kustomize),
      'manifests.yaml': manifestsYaml(changes),
      'network-policy.yaml': healthNetworkPolicyYaml(changes),
      'plan.json': `${JSON.stringify(plan, null, 2)}\n`,
      'PLAN.md': renderPlanMarkdown(plan, changes),
      ...monitoringFiles(plan),
    };
    for (const [path, text] of Object.entries(containerdFiles(resolved.spec))) files[`containerd/${path}`] = text;
    if (kustomize) {
      for (const [path, text] of Object.entries(kustomizeComponent(changes))) files[`kustomize/${path}`] = text;
    }
    return { files };
  } catch (err) {
    if (err instanceof GracegateError) throw err.locate(specPath);
    throw err;
  }
}

export async function run(args: string[]): Promise<number> {
  return runParsedCommand(USAGE, args, {
    out: { type: 'string', short: 'o' },
    image: { type: 'string' },
    'fail-on': { type: 'string', default: 'error' },
    kustomize: { type: 'boolean' },
  }, true, async ({ values, positionals }) => {
    if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'missing the spec file (a GracefulGateway or GracefulWorkload)' : 'synth takes exactly one spec file');
    const out = values.out as string | undefined;
    if (!out) throw new UsageError('missing --out DIR');
    const failOn = failOnFlag(values['fail-on'] as string);
    const image = values.image as string | undefined;
    if (image !== undefined && !/^\S+$/.test(image)) throw new UsageError(`--image must be an image reference, got '${image}'`);

    const { files, blocked } = render(positionals[0]!, image, failOn, values.kustomize === true);
    if (blocked) {
      process.stderr.write(blocked);
      return 1;
    }
    writeSynthOutput(out, files);
    process.stdout.write(`${Object.keys(files).sort().map((f) => `wrote ${join(out, f)}`).join('\n')}\n`);
    return 0;
  });
}
