import { readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { MANIFESTS_MAX_BYTES, readBounded } from '../core/bounded-read';
import { GracegateError, inputMessage } from '../core/errors';
import { renderLintJson } from '../lint/format/json';
import { renderLintSarif } from '../lint/format/sarif';
import { renderLintText } from '../lint/format/text';
import { failing, lintWithPlans } from '../lint/lint';
import type { LintOptions } from '../lint/context';
import { readManifests, type ManifestDocument } from '../lint/manifests';
import { givenPaths } from '../schema/given-paths';
import { failOnFlag, integerFlag, runParsedCommand, UsageError } from './args';
import { loadSpecFile } from './load-spec-file';
import { readInputFile } from '../core/read-input';

const USAGE = `usage: gracegate lint [FILE|DIR|-]... [--spec gateway.yaml|DIR | --lb MODEL[,field=value...]] [--nodes N]
                     [--format text|json|sarif] [--fail-on error|warning|info|none] [--stdin-name NAME]
       gracegate lint --cluster [--kubeconfig FILE] [--context NAME] [--namespace NS] [--spec ...] ...

Finds termination traps in rendered manifests: whether the grace period, the preStop hooks, the
proxy's drain settings, the probes, the Services the LB probes through, the rollout and the
disruption budgets fit together. Reads files, directories of .yaml/.yml (recursively) and '-'
(stdin), e.g.  helm template igw istio/gateway | gracegate lint -

  --spec FILE|DIR    check against a GracefulGateway plan: every number it computes is compared
                     with what the manifests hold (the LB and node count come from the spec); a
                     directory: each of its specs for the gateway it names. On objects read back
                     from the API server only what the plan sets is compared (defaults and the
                     injector's additions are not drift)
  --cluster          read the gateways, Pods, Services, PDBs, HPAs and Istio's injection settings
                     from the API server (read-only, through kubectl and your kubeconfig)
  --kubeconfig FILE, --context NAME, --namespace NS
                     as kubectl takes them (each implies --cluster; default: every namespace)
  --istio-namespace NS  where istiod's mesh and injector ConfigMaps are (default istio-system)
  --lb MODEL,...     the LB without a spec, in its vendor's field names, e.g.
                     --lb haproxy,inter=2s,fall=3   --lb nlb,targetType=ip   --lb citrix,interval=5s
                     and what it probes, where the manifests do not say: path=/…,port=N (a node
                     port, hostPort or the pod's port), e.g. --lb haproxy,path=/healthz,port=30180
  --nodes N          nodes the gateway pods may run on (rollout and anti-affinity checks)
  --format FORMAT    text (default), json ({"findings": [...]}) or sarif (SARIF 2.1.0)
  --fail-on LEVEL    exit 1 when a finding reaches it (default error)
  --stdin-name NAME  the file name findings on stdin carry (default stdin)

Suppress a rule on one object with the annotation gracegate.dev/ignore: RULE-ID[,RULE-ID]
(and gracegate.dev/ignore-reason: why); suppressed findings are reported. Rules: docs/lint.md.
Exit 1: a finding at or above --fail-on, or with --cluster a kind that could not be read.
`;

/** At most this many files are read from the directories given: a lint of a whole disk is a mistake. */
export const MAX_DIRECTORY_FILES = 10_000;

/** A file system error while walking the directories given, naming the path (exit 2, no stack trace). */
function walkError(path: string, err: unknown): GracegateError {
  const e = err as NodeJS.ErrnoException;
  return new GracegateError(
    `cannot read ${path}: ${e.code ?? e.message}${e.code ? ` (${e.message.replace(/^[A-Z]+: /, '').replace(/, \w+ '.*'$/, '')})` : ''}`,
  );
}

/** The markers `gracegate synth` leaves in what it writes (src/cli/synth-output.ts, synth-tree.ts). */
const SYNTH_MARKERS = ['.gracegate-synth.json', '.gracegate-synth-tree.json'];

/**
 * What to render before linting a directory `gracegate synth` wrote: its values overlay is Helm
 * values, not manifests, and the pods exist only once the chart is rendered with it. The command
 * names the chart, release and namespace from the directory's plan.json where it can.
 */
function synthOutputAdvice(dir: string, tree: boolean): string {
  const lead = `${dir} is what gracegate synth wrote, not rendered manifests: the pods are in none of its files`;
  if (tree) return `${lead}; lint one gateway's directory of it for the command that renders them`;
  let plan: {
    kind?: string;
    gateway?: { name?: string; namespace?: string };
    workload?: { name?: string; namespace?: string };
    chart?: { kind?: string; version?: string };
  } = {};
  try {
    plan = JSON.parse(readInputFile(join(dir, 'plan.json'), MANIFESTS_MAX_BYTES)) as typeof plan;
  } catch {
    // No readable plan.json: the advice keeps its placeholders.
  }
  const name = plan.gateway?.name ?? plan.workload?.name ?? 'NAME';
  const ns = plan.gateway?.namespace ?? plan.workload?.namespace ?? 'NAMESPACE';
  if (plan.kind === 'GracefulWorkloadPlan')
    return `${lead}. Render your app with the changes first (post-render adds the budget too): helm template ${name} CHART -n ${ns} | gracegate post-render --spec SPEC.yaml | gracegate lint -`;
  if (plan.chart?.kind === 'gateway-api')
    return `${lead}: istiod renders them from gateway-parameters.yaml. Lint the running gateway instead: gracegate lint --cluster --namespace ${ns} --spec SPEC.yaml`;
  const chart = plan.chart?.kind === 'istio-gateway' ? `istio/gateway --version ${plan.chart.version}` : 'CHART';
  return `${lead}. Render the chart with values-overlay.yaml first, then lint it with manifests.yaml, the objects beside the pods: helm template ${name} ${chart} -n ${ns} -f ${join(dir, 'values-overlay.yaml')} | gracegate lint - ${join(dir, 'manifests.yaml')} --spec SPEC.yaml`;
}

/**
 * The YAML files under `dir`, recursively, following symbolic links; `within` holds the real paths
 * of the directories being walked, so a link back to one of them (a loop: it used to be followed
 * until ELOOP, then a stack trace and exit 1) is an error naming the link.
 */
function yamlFiles(dir: string, out: string[], within: ReadonlySet<string> = new Set()): void {
  let real: string;
  let names: string[];
  try {
    real = realpathSync(dir);
    names = readdirSync(dir).sort();
  } catch (err) {
    throw walkError(dir, err);
  }
  if (within.has(real)) throw new GracegateError(`${dir} is a symbolic link loop: it leads back to ${real}, which is being read already`);
  const inside = new Set(within).add(real);
  const marker = SYNTH_MARKERS.find((m) => names.includes(m));
  if (marker) throw new GracegateError(synthOutputAdvice(dir, marker === SYNTH_MARKERS[1]));
  if (names.includes('Chart.yaml')) {
    throw new GracegateError(`${dir} is a Helm chart, whose templates are not manifests: render it first, e.g. helm template NAME ${dir} | gracegate lint -`);
  }
  for (const name of names) {
    const full = join(dir, name);
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(full);
    } catch (err) {
      throw walkError(full, err);
    }
    if (st.isDirectory()) yamlFiles(full, out, inside);
    else if (/\.ya?ml$/.test(name)) out.push(full);
    if (out.length > MAX_DIRECTORY_FILES)
      throw new GracegateError(`more than ${MAX_DIRECTORY_FILES} YAML files under the directories given; lint fewer at a time`);
  }
}

function readStdin(): string {
  try {
    return readBounded(0, MANIFESTS_MAX_BYTES, 'the manifests on stdin');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EBADF') return '';
    throw err;
  }
}

function readInputs(inputs: string[], stdinName: string): ManifestDocument[] {
  const docs: ManifestDocument[] = [];
  let stdinRead = false;
  for (const input of inputs) {
    if (input === '-') {
      if (stdinRead) throw new UsageError("'-' (stdin) given twice");
      stdinRead = true;
      docs.push(...readManifests(readStdin(), stdinName));
      continue;
    }
    let isDir = false;
    try {
      isDir = statSync(input).isDirectory();
    } catch {
      // readInputFile says why the path cannot be read.
    }
    const files: string[] = [];
    if (isDir) yamlFiles(input, files);
    else files.push(input);
    for (const file of files) docs.push(...readManifests(readInputFile(file, MANIFESTS_MAX_BYTES), file));
  }
  if (!docs.some((d) => d.value !== null && d.value !== undefined)) {
    throw new GracegateError(`no Kubernetes objects in ${inputs.join(', ')}`);
  }
  return docs;
}

/**
 * `--lb haproxy,inter=2s,fall=3`: the vendor's block, validated by its own schema. The LB vendors
 * and the planner are loaded only when a flag needs them (the rules alone start faster).
 */
export function parseLbFlag(text: string): NonNullable<LintOptions['lb']> {
  const { lbBehaviour, loadBalancerSchema } = require('../lb/registry') as typeof import('../lb/registry');
  const [model, ...pairs] = text.split(',').map((s) => s.trim());
  const block: Record<string, unknown> = { model };
  const probe: NonNullable<NonNullable<LintOptions['lb']>['probe']> = {};
  for (const pair of pairs) {
    const m = /^([A-Za-z][A-Za-z0-9]*)=(.*)$/.exec(pair);
    if (!m) throw new UsageError(`--lb: '${pair}' is not field=value`);
    const raw = m[2]!;
    // What the LB probes, beside its vendor's fields: the path it asks and the port it reaches.
    if (m[1] === 'path') {
      if (!raw.startsWith('/')) throw new UsageError(`--lb path: '${raw}' must start with /`);
      probe.path = raw;
      continue;
    }
    if (m[1] === 'port') {
      if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 65535) throw new UsageError(`--lb port: '${raw}' is not a port number`);
      probe.port = Number(raw);
      continue;
    }
    block[m[1]!] = /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw === 'true' ? true : raw === 'false' ? false : raw;
  }
  const parsed = loadBalancerSchema.safeParse(block, { error: inputMessage });
  if (!parsed.success) {
    throw new UsageError(parsed.error.issues.map((i) => `--lb ${i.path.join('.') || 'model'}: ${i.message}`).join('\n'));
  }
  return {
    behaviour: lbBehaviour(parsed.data, givenPaths(block, 'spec.loadBalancer')),
    source: `--lb ${text}`,
    ...(probe.path !== undefined || probe.port !== undefined ? { probe } : {}),
  };
}

/** What `--spec FILE` gives lint, or for a directory one such set per GracefulGateway spec in it (sorted by file). */
function specOptions(specPath: string, base: LintOptions): LintOptions[] {
  const { lbBehaviour } = require('../lb/registry') as typeof import('../lb/registry');
  const { planGateway } = require('../plan/plan-gateway') as typeof import('../plan/plan-gateway');
  const { podChanges } = require('../pod/pod-changes') as typeof import('../pod/pod-changes');
  let files = [specPath];
  let isDir = false;
  try {
    isDir = statSync(specPath).isDirectory();
  } catch {
    // loadSpecFile says why the path cannot be read.
  }
  if (isDir) {
    files = readdirSync(specPath)
      .filter((f) => /\.ya?ml$/.test(f))
      .sort()
      .map((f) => join(specPath, f));
    if (files.length === 0) throw new UsageError(`--spec ${specPath}: no .yaml or .yml spec in the directory`);
  }
  const seen = new Map<string, string>();
  return files.map((file) => {
    const resolved = loadSpecFile(file);
    const plan = planGateway(resolved);
    const key = `${plan.gateway.namespace}/${plan.gateway.name}`;
    if (seen.has(key)) throw new UsageError(`--spec ${specPath}: ${seen.get(key)} and ${file} both plan ${key}`);
    seen.set(key, file);
    return {
      ...base,
      plan: { plan, changes: podChanges(plan), source: `--spec ${file}` },
      lb: { behaviour: lbBehaviour(resolved.spec.spec.loadBalancer, resolved.given), source: `--spec ${file}` },
      nodes: base.nodes ?? { value: resolved.spec.spec.nodes, source: `${file} spec.nodes` },
    };
  });
}

export async function run(args: string[]): Promise<number> {
  return runParsedCommand(
    USAGE,
    args,
    {
      spec: { type: 'string' },
      lb: { type: 'string' },
      nodes: { type: 'string' },
      format: { type: 'string', default: 'text' },
      'fail-on': { type: 'string', default: 'error' },
      'stdin-name': { type: 'string', default: 'stdin' },
      cluster: { type: 'boolean' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      namespace: { type: 'string' },
      'istio-namespace': { type: 'string' },
    },
    true,
    async ({ values, positionals }) => {
      const format = values.format as string;
      if (!['text', 'json', 'sarif'].includes(format)) throw new UsageError(`--format must be text, json or sarif, got '${format}'`);
      const failOn = failOnFlag(values['fail-on'] as string);
      const cluster =
        values.cluster === true ||
        values.kubeconfig !== undefined ||
        values.context !== undefined ||
        values.namespace !== undefined ||
        values['istio-namespace'] !== undefined;
      if (cluster && positionals.length > 0) throw new UsageError('give manifests or --cluster, not both');
      if (!cluster && positionals.length === 0) throw new UsageError("missing the manifests: give files, directories or '-' for stdin, or --cluster");
      if (values.spec !== undefined && values.lb !== undefined) throw new UsageError('give --spec or --lb, not both: the spec names its LB');

      const base: LintOptions = {};
      if (values.lb !== undefined) base.lb = parseLbFlag(values.lb as string);
      if (values.nodes !== undefined) {
        const n = integerFlag('nodes', values.nodes as string);
        if (n < 1) throw new UsageError('--nodes must be at least 1');
        base.nodes = { value: n, source: '--nodes' };
      }
      const plans = values.spec !== undefined ? specOptions(values.spec as string, base) : [];

      let docs: ManifestDocument[];
      let unread: string[] | undefined;
      if (cluster) {
        const { readCluster } = require('./lint-cluster') as typeof import('./lint-cluster');
        const read = readCluster(
          {
            ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig as string } : {}),
            ...(values.context !== undefined ? { context: values.context as string } : {}),
            ...(values.namespace !== undefined ? { namespace: values.namespace as string } : {}),
            ...(values['istio-namespace'] !== undefined ? { istioNamespace: values['istio-namespace'] as string } : {}),
          },
          plans.map((p) => ({ namespace: p.plan!.plan.gateway.namespace, name: p.plan!.changes.hcConfigMapName })),
        );
        docs = read.docs;
        unread = read.unread;
        for (const u of unread) process.stderr.write(`gracegate lint: could not read ${u}\n`);
      } else docs = readInputs(positionals, values['stdin-name'] as string);

      const report = { ...lintWithPlans(docs, plans, base), ...(unread && unread.length > 0 ? { unread } : {}) };
      const version = (require('../../../package.json') as { version: string }).version;
      process.stdout.write(format === 'json' ? renderLintJson(report) : format === 'sarif' ? renderLintSarif(report, version) : renderLintText(report));
      return failing(report, failOn).length > 0 || (report.unread?.length ?? 0) > 0 ? 1 : 0;
    },
  );
}
