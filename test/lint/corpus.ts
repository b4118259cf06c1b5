import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { manifestsYaml } from '../../src/delivery/manifests';
import { valuesOverlayYaml } from '../../src/delivery/helm-values/overlay';
import { CLI, HELMS, example, helm } from '../emit/helpers';
import { requireTool, run, TOOLS } from '../delivery/tools';
import { gatewayApiGoldens, gatewayApiVersion, gatewayChart, SOURCE_VERSION } from '../support/fixtures';
import { REPO_ROOT } from '../support/repo';
import { renderChartFixtures } from './chart-fixtures';
import { optionsOf, traps } from './helpers';

/**
 * lint's acceptance set (issue 28): real charts and manifests, each with an expected-findings file
 * reviewed by hand (test/lint/corpus/expected/<slug>.yaml). The inputs:
 * - the istio/gateway charts 1.26.8, 1.27.9, 1.30.3 and the 1.31 chart, and the in-house chart,
 *   rendered with their defaults by the real helm 3 (the charts through test/support/fixtures.ts);
 * - istiod's Gateway API golden outputs (simple.yaml, customizations.yaml; the Gateway itself, the
 *   controller's input with no name in the goldens, left out);
 * - the source article's gateway design and the second article's app, written as manifests
 *   (test/lint/corpus/inputs/), and manifests of other LB setups (NLB and ALB annotations, a health
 *   container of one's own, a health listener of the proxy's own), some linted twice with different flags;
 * - gracegate's own output for every example spec: the values overlays and post-render with
 *   manifests.yaml and the filled-in NetworkPolicy (chart-fixtures.ts), the autoscaled example, the
 *   Gateway API example (the golden patched with its parameters ConfigMap by kubectl's strategic
 *   merge, as istiod applies it), the workload example (post-render of its Deployment); all clean;
 * - yesterday's output: the 1.27.9 chart with gracegate's overlay less the probe-rewrite annotation.
 * The trap manifests (test/lint/traps/) join the corpus with their inline `# expect:` marks.
 */

export type CorpusInput = {
  name: string;
  /** The expected-findings file's name, without .yaml. */
  slug: string;
  file: string;
  text: string;
  /** The CLI flags lint gets (the in-process options are made from them). */
  flags: string[];
  /** A trap manifest's inline expectations, instead of an expected-findings file. */
  inline?: Array<{ rule: string; line: number }>;
};

export const INPUTS = join(REPO_ROOT, 'test', 'lint', 'corpus', 'inputs');
export const EXPECTED = join(REPO_ROOT, 'test', 'lint', 'corpus', 'expected');

/** Flags for the hand-written inputs: each is linted once per entry (a file may appear twice). */
const HAND_WRITTEN: Array<{ file: string; flags: string[]; as?: string }> = [
  { file: 'article-w6.yaml', flags: ['--nodes', '2'] },
  { file: 'article-w6.yaml', flags: ['--lb', 'haproxy,inter=2s,fall=2,onMarkedDown=shutdown-sessions', '--nodes', '2'], as: 'article-w6-haproxy' },
  { file: 'article-w6-traps.yaml', flags: ['--nodes', '2'] },
  { file: 'article-w6-hostport.yaml', flags: ['--nodes', '3'] },
  { file: 'article-app.yaml', flags: [] },
  { file: 'nlb-status-port.yaml', flags: [] },
  { file: 'alb-ingress.yaml', flags: [] },
  { file: 'own-health-container.yaml', flags: [] },
  { file: 'own-health-container.yaml', flags: ['--lb', 'haproxy,path=/ready,port=30181'], as: 'own-health-container-lb-flag' },
  { file: 'proxy-health-listener.yaml', flags: [] },
];

const slugOf = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9.]+/g, '-')
    .replace(/^-|-$/g, '');

/** The documents of a stream less those of `kind` (a golden's Gateway, which has no name). */
function withoutKind(text: string, kind: string): string {
  return parseAllDocuments(text)
    .filter((d) => (d.toJS() as { kind?: string } | null)?.kind !== kind)
    .map((d) => `---\n${d.toString()}`)
    .join('');
}

function kubectlPatch(object: unknown, patchYaml: string, dir: string): unknown {
  const file = join(dir, `patch-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, stringify(object));
  const r = run(requireTool(TOOLS.kubectl), ['patch', '--local', '-f', file, '--type', 'strategic', '-p', JSON.stringify(parse(patchYaml)), '-o', 'json']);
  if (r.status !== 0) throw new Error(`kubectl patch: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/**
 * gracegate's Gateway API output: istiod's golden Deployment and Service for a Gateway, renamed to
 * the example's Gateway (igw-api in istio-ingress), each patched with its key of the example's
 * parameters ConfigMap; the HPA and PDB istiod makes from the other keys (its customizations.yaml
 * golden's, renamed, patched); synth's manifests.yaml beside them.
 */
function gatewayApiOutput(dir: string): string {
  const golden = gatewayApiGoldens(gatewayApiVersion());
  const rename = (text: string, from: string) =>
    text
      .replaceAll(`${from}-istio`, 'igw-api-istio')
      .replaceAll(`gateway-name: ${from}`, 'gateway-name: igw-api')
      .replaceAll('namespace: default', 'namespace: istio-ingress')
      .replaceAll('namespaces/default/', 'namespaces/istio-ingress/');
  const objects = (text: string) =>
    parseAllDocuments(text)
      .map((d) => d.toJS() as Record<string, any>)
      .filter((o) => o && o.kind !== 'Gateway');
  const simple = objects(rename(readFileSync(join(golden, 'simple.yaml'), 'utf8'), 'default'));
  const custom = objects(rename(readFileSync(join(golden, 'customizations.yaml'), 'utf8'), 'namespace'));
  const out = join(dir, 'gateway-api-synth');
  const r = spawnSync(process.execPath, [CLI, 'synth', join(REPO_ROOT, 'examples', 'gateway-api.yaml'), '--out', out], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`synth examples/gateway-api.yaml: ${r.stderr}`);
  const params = load(readFileSync(join(out, 'gateway-parameters.yaml'), 'utf8')) as { data: Record<string, string> };
  const patched = [
    ...simple.map((o) =>
      o.kind === 'Deployment' ? kubectlPatch(o, params.data.deployment!, dir) : o.kind === 'Service' ? kubectlPatch(o, params.data.service!, dir) : o,
    ),
    kubectlPatch(
      custom.find((o) => o.kind === 'HorizontalPodAutoscaler'),
      params.data.horizontalPodAutoscaler!,
      dir,
    ),
    kubectlPatch(
      custom.find((o) => o.kind === 'PodDisruptionBudget'),
      params.data.podDisruptionBudget!,
      dir,
    ),
  ];
  return `${patched.map((o) => `---\n${stringify(o)}`).join('')}---\n${readFileSync(join(out, 'manifests.yaml'), 'utf8')}`;
}

function postRenderWorkload(input: string): string {
  const r = spawnSync(process.execPath, [CLI, 'post-render', '--spec', join(REPO_ROOT, 'examples', 'app-workload.yaml')], {
    input,
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (r.status !== 0) throw new Error(`post-render --spec examples/app-workload.yaml: ${r.stderr}`);
  return r.stdout;
}

/** Every corpus input, rendered into `dir` (the files the CLI, kube-score and the bench read). */
export function buildCorpus(dir: string): CorpusInput[] {
  const out: CorpusInput[] = [];
  const add = (name: string, text: string, flags: string[] = [], slug = slugOf(name)) => {
    const file = join(dir, `${slug}.yaml`);
    writeFileSync(file, text);
    out.push({ name, slug, file, text, flags });
  };
  // The charts' defaults and gracegate's output on them (values overlays, post-render for 1.26).
  for (const f of renderChartFixtures(dir)) add(f.name, f.text, f.spec ? ['--spec', f.spec] : []);
  const helm3 = HELMS['helm 3.17'];
  add(`istio/gateway ${SOURCE_VERSION} defaults`, helm(helm3, ['template', 'igw', gatewayChart(SOURCE_VERSION), '--namespace', 'istio-ingress']));

  // The autoscaled example on its chart, with manifests.yaml.
  const autoscaled = example('haproxy-autoscaled.yaml');
  const overlay = join(dir, 'haproxy-autoscaled.values.yaml');
  writeFileSync(overlay, valuesOverlayYaml(autoscaled.changes, { kind: 'istio-gateway', version: '1.27.9' }));
  const autoscaledText = `${helm(helm3, ['template', 'igw-public', gatewayChart('1.27.9'), '--namespace', 'istio-ingress', '-f', overlay])}---\n${manifestsYaml(autoscaled.changes)}`;
  add('istio/gateway 1.27.9 + gracegate (haproxy-autoscaled.yaml)', autoscaledText, ['--spec', join(REPO_ROOT, 'examples', 'haproxy-autoscaled.yaml')]);

  // Yesterday's output: gracegate's overlay before it kept the sidecar's probes its own.
  const ours = out.find((x) => x.name === 'istio/gateway 1.27.9 + gracegate (haproxy.yaml)')!;
  const line = /^ +sidecar\.istio\.io\/rewriteAppHTTPProbers: "false"\n/m;
  if (!line.test(ours.text)) throw new Error('the 1.27.9 haproxy render has no rewriteAppHTTPProbers annotation to take out');
  add('istio/gateway 1.27.9 + gracegate (haproxy.yaml) without the probe-rewrite annotation', ours.text.replace(line, ''));

  // plan-mismatch: the same output with the grace period changed by hand, linted with its spec.
  const spec = ours.flags[1]!;
  const planned = optionsOf(ours.flags).plan!.plan.timings.terminationGracePeriodSeconds;
  add(
    'istio/gateway 1.27.9 + gracegate (haproxy.yaml), grace period edited by hand',
    ours.text.replace(`terminationGracePeriodSeconds: ${planned}`, 'terminationGracePeriodSeconds: 30'),
    ['--spec', spec],
  );

  // istiod's Gateway API goldens, and gracegate's Gateway API example applied to them.
  const goldens = gatewayApiGoldens(gatewayApiVersion());
  for (const g of ['simple.yaml', 'customizations.yaml']) add(`istiod Gateway API golden ${g}`, withoutKind(readFileSync(join(goldens, g), 'utf8'), 'Gateway'));
  // Without --spec: lint's plan comparison looks for the spec's name, and istiod names the Deployment <name>-istio.
  add('istiod Gateway API golden + gracegate (gateway-api.yaml)', gatewayApiOutput(dir));

  // The workload example: post-render of its Deployment.
  add('inference-api + gracegate post-render (app-workload.yaml)', postRenderWorkload(readFileSync(join(INPUTS, 'inference-api.yaml'), 'utf8')));

  for (const h of HAND_WRITTEN) add(`hand-written ${h.as ?? h.file.replace(/\.yaml$/, '')}`, readFileSync(join(INPUTS, h.file), 'utf8'), h.flags);
  for (const t of traps())
    out.push({ name: `trap manifest \`${t.rule}\``, slug: `trap-${t.rule}`, file: t.file, text: t.text, flags: t.flags, inline: t.expected });
  return out;
}
