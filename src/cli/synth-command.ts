import { statSync } from 'node:fs';
import { join } from 'node:path';
import { MANIFESTS_MAX_BYTES } from '../core/bounded-read';
import { containerdFiles } from '../emit/containerd';
import { synthFiles } from '../delivery/registry';
import { monitoringFiles } from '../emit/monitoring';
import { renderPlanMarkdown } from '../emit/plan-markdown';
import { renderPlanSvg } from '../emit/plan-svg';
import { GracegateError } from '../core/errors';
import type { FailOn } from '../model/finding';
import { planSummary } from '../emit/plan-summary';
import { blockedBy, shownFindings } from './synth-findings';
import { planGateway } from '../plan/plan-gateway';
import { podChanges } from '../pod/pod-changes';
import { EXIT, failOnFlag, runParsedCommand, UsageError } from './args';
import { loadAnySpecFile } from './load-spec-file';
import { readInputFile } from '../core/read-input';
import { writeSynthOutput } from './synth-output';
import { synthTree, type Rendered } from './synth-tree';
import { renderWorkload } from './synth-workload';

const USAGE = `usage: gracegate synth <spec.yaml> --out DIR [--image IMAGE] [--fail-on error|warning|info|none]
                       [--kustomize] [--parameters CONFIGMAP.yaml]
       gracegate synth <specs-dir> --out OUT [--fail-fast] [--image IMAGE] [--fail-on ...] [--kustomize]

For a GracefulWorkload: DIR/manifests.yaml (its PodDisruptionBudget), DIR/plan.json, DIR/PLAN.md and,
with --kustomize, DIR/kustomize/ (the patch for its Deployment or StatefulSet); or deliver the same
changes with 'gracegate post-render --spec <spec.yaml>'.
For a GracefulGateway, everything needed to run the gateway with the hc sidecar:
  DIR/values-overlay.yaml   Helm values for the chart in spec.chart (pass it last with -f)
  DIR/gateway-parameters.yaml  instead, for spec.chart.kind gateway-api: the ConfigMap istiod applies to
                            the Deployment, HPA and PDB it deploys for the Gateway (keys deployment,
                            podDisruptionBudget, horizontalPodAutoscaler); synth prints the Gateway's line
  DIR/manifests.yaml        hc ConfigMap, health Service, PodDisruptionBudget, and the NetworkPolicy
                            over the sidecar's ports: the health port for spec.networkPolicy's LB
                            sources, the witness port for the node only, the metrics port for its
                            scrapers (kubectl apply -f)
  DIR/containerd/           certs.d hosts.toml, config_path snippets, kubespray vars (only with spec.registry)
  DIR/plan.json, PLAN.md    the plan, for the reviewer (PLAN.md shows DIR/plan.svg, its timeline)
  DIR/prometheus-rules.yaml the alerts (PrometheusRule, or a rule file with observability.prometheus scrape-config)
  DIR/pod-monitor.yaml      the PodMonitor (observability.prometheus operator, the default)
  DIR/prometheus-scrape.yaml  a scrape_configs job instead (observability.prometheus scrape-config)
  DIR/grafana-dashboard.json  the dashboard (none of these four with observability.prometheus none)
  DIR/kustomize/            with --kustomize: a Kustomize component doing the same injection

Only once everything is rendered is anything written: on bad input nothing is. DIR may hold other
files: synth replaces only the files it wrote before (listed in DIR/.gracegate-synth.json), deletes
only those it no longer writes, and refuses (writing nothing) to replace a file it did not write.
  --kustomize     also write the Kustomize component (list DIR/kustomize under components:); for
                  gateway-api it adds the parametersRef to your Gateway
  --parameters F  gateway-api: the parameters ConfigMap your Gateway already names; gracegate's
                  patches are merged into it (a Gateway names one)
  --image IMAGE   the hc sidecar image (default ghcr.io/gracegate/gracegate:<version>)
  --fail-on SEV   write nothing when a plan finding reaches SEV (default error; none: always write)
Exit 1: a finding at or above --fail-on (nothing written).

With a directory: every *.yaml / *.yml in its tree is a spec (dot files and directories, symbolic
links and earlier synth outputs are skipped), written to OUT/<its path without the extension>/ as
above. A bad spec is reported with its file and the others are still written; the exit status is
the worst (2 bad input, 1 held back by a finding). OUT/.gracegate-synth-tree.json lists the gateways
written: the output of a spec that is gone is removed (its own files only).
  --fail-fast     render every spec first; stop at the first that fails, writing nothing
`;

/**
 * Renders every output file (relative path → content) in memory; throws a GracegateError on bad
 * input. `blocked`: the findings at or above --fail-on, worded, one per line (nothing to write).
 */
export function render(specPath: string, image: string | undefined, failOn: FailOn, kustomize = false, parametersPath?: string): Rendered {
  const spec = loadAnySpecFile(specPath);
  if (spec.kind === 'GracefulWorkload') {
    if (parametersPath !== undefined)
      throw new UsageError("--parameters is for spec.chart.kind gateway-api (a Gateway's parameters ConfigMap), not a GracefulWorkload");
    return renderWorkload(specPath, spec.resolved, failOn, kustomize);
  }
  const resolved = spec.resolved;
  const plan = planGateway(resolved);
  const blocked = blockedBy(specPath, plan.findings, failOn);
  if (blocked) return { files: {}, blocked };
  try {
    const changes = podChanges(plan, image !== undefined ? { image } : {});
    if (parametersPath !== undefined && !changes.gatewayApi)
      throw new UsageError("--parameters is for spec.chart.kind gateway-api (a Gateway's parameters ConfigMap)");
    const delivered = synthFiles({
      kind: 'GracefulGateway',
      changes,
      chart: resolved.spec.spec.chart,
      kustomize,
      parameters:
        parametersPath === undefined
          ? undefined
          : { path: parametersPath, read: () => readInputFile(parametersPath, MANIFESTS_MAX_BYTES, `--parameters ${parametersPath}`) },
      warn: (line) => process.stderr.write(`gracegate synth: ${specPath}: ${line}\n`),
    });
    const files: Record<string, string> = {
      ...delivered.files,
      'plan.json': `${JSON.stringify(plan, null, 2)}\n`,
      'PLAN.md': renderPlanMarkdown(plan, changes, 'plan.svg'),
      'plan.svg': renderPlanSvg(plan),
      ...monitoringFiles(plan),
    };
    for (const [path, text] of Object.entries(containerdFiles(resolved.spec))) files[`containerd/${path}`] = text;
    return {
      files,
      findings: shownFindings(specPath, plan.findings),
      summary: planSummary(plan),
      ...(delivered.note !== undefined ? { note: delivered.note } : {}),
    };
  } catch (err) {
    if (err instanceof UsageError) throw err;
    if (err instanceof GracegateError) throw err.locate(specPath);
    throw err;
  }
}

export async function run(args: string[]): Promise<number> {
  return runParsedCommand(
    USAGE,
    args,
    {
      out: { type: 'string' },
      image: { type: 'string' },
      'fail-on': { type: 'string', default: 'error' },
      kustomize: { type: 'boolean' },
      'fail-fast': { type: 'boolean' },
      parameters: { type: 'string' },
    },
    true,
    async ({ values, positionals }) => {
      if (positionals.length !== 1)
        throw new UsageError(
          positionals.length === 0
            ? 'missing the spec file (a GracefulGateway or GracefulWorkload) or a directory of them'
            : 'synth takes exactly one spec file or directory',
        );
      const out = values.out as string | undefined;
      if (!out) throw new UsageError('missing --out DIR');
      const failOn = failOnFlag(values['fail-on'] as string);
      const image = values.image as string | undefined;
      if (image !== undefined && !/^\S+$/.test(image)) throw new UsageError(`--image must be an image reference, got '${image}'`);
      const kustomize = values.kustomize === true;

      const parameters = values.parameters as string | undefined;
      if (statSync(positionals[0]!, { throwIfNoEntry: false })?.isDirectory()) {
        if (parameters !== undefined) throw new UsageError("--parameters names one Gateway's ConfigMap: use it with one spec file, not a directory");
        return synthTree(positionals[0]!, out, {
          failFast: values['fail-fast'] === true,
          render: (file) => render(file, image, failOn, kustomize),
          out: (line) => process.stdout.write(`${line}\n`),
          err: (line) => process.stderr.write(`${line}\n`),
        });
      }
      if (values['fail-fast'] === true) throw new UsageError('--fail-fast is for a directory of specs');
      const { files, blocked, note, findings, summary } = render(positionals[0]!, image, failOn, kustomize, parameters);
      if (blocked) {
        process.stderr.write(`${blocked}\ngracegate synth: nothing written; fix the finding(s) above, or pass --fail-on none to write anyway\n`);
        return EXIT.refused;
      }
      writeSynthOutput(out, files);
      // What the plan found comes before what was written: a warning under a list of files goes unread.
      for (const finding of findings ?? []) process.stderr.write(`${finding}\n`);
      if (summary) process.stdout.write(`${summary}\n`);
      process.stdout.write(
        `${Object.keys(files)
          .sort()
          .map((f) => `wrote ${join(out, f)}`)
          .join('\n')}\n`,
      );
      if (note) process.stdout.write(`Gateway: ${note}\n`);
      return EXIT.done;
    },
  );
}
