import { readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { MANIFESTS_MAX_BYTES, readBounded } from '../core/bounded-read';
import { GracegateError, inputMessage } from '../core/errors';
import { renderLintJson } from '../lint/format/json';
import { renderLintSarif } from '../lint/format/sarif';
import { renderLintText } from '../lint/format/text';
import { failing, lintDocuments } from '../lint/lint';
import type { LintOptions } from '../lint/context';
import { readManifests, type ManifestDocument } from '../lint/manifests';
import { givenPaths } from '../schema/given-paths';
import { failOnFlag, integerFlag, runParsedCommand, UsageError } from './args';
import { loadSpecFile } from './load-spec-file';
import { readInputFile } from './read-input';

const USAGE = `usage: gracegate lint [FILE|DIR|-]... [--spec gateway.yaml | --lb MODEL[,field=value...]] [--nodes N]
                     [--format text|json|sarif] [--fail-on error|warning|info|none] [--stdin-name NAME]

Finds termination traps in rendered manifests: whether the grace period, the preStop hooks, the
proxy's drain settings, the probes, the Services the LB probes through, the rollout and the
disruption budgets fit together. Reads files, directories of .yaml/.yml (recursively) and '-'
(stdin), e.g.  helm template igw istio/gateway | gracegate lint -

  --spec FILE        check against a GracefulGateway plan: every number it computes is compared
                     with what the manifests hold (the LB and node count come from the spec)
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
Exit status: 0 no finding at or above --fail-on, 1 such findings, 2 bad input.
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
    },
    true,
    async ({ values, positionals }) => {
      const format = values.format as string;
      if (!['text', 'json', 'sarif'].includes(format)) throw new UsageError(`--format must be text, json or sarif, got '${format}'`);
      const failOn = failOnFlag(values['fail-on'] as string);
      if (positionals.length === 0) throw new UsageError("missing the manifests: give files, directories or '-' for stdin");
      if (values.spec !== undefined && values.lb !== undefined) throw new UsageError('give --spec or --lb, not both: the spec names its LB');

      const options: LintOptions = {};
      if (values.spec !== undefined) {
        const specPath = values.spec as string;
        const { lbBehaviour } = require('../lb/registry') as typeof import('../lb/registry');
        const { planGateway } = require('../plan/plan-gateway') as typeof import('../plan/plan-gateway');
        const { podChanges } = require('../pod/pod-changes') as typeof import('../pod/pod-changes');
        const resolved = loadSpecFile(specPath);
        const plan = planGateway(resolved);
        options.plan = { plan, changes: podChanges(plan), source: `--spec ${specPath}` };
        options.lb = { behaviour: lbBehaviour(resolved.spec.spec.loadBalancer, resolved.given), source: `--spec ${specPath}` };
        options.nodes = { value: resolved.spec.spec.nodes, source: `${specPath} spec.nodes` };
      }
      if (values.lb !== undefined) options.lb = parseLbFlag(values.lb as string);
      if (values.nodes !== undefined) {
        const n = integerFlag('nodes', values.nodes as string);
        if (n < 1) throw new UsageError('--nodes must be at least 1');
        options.nodes = { value: n, source: '--nodes' };
      }

      const report = lintDocuments(readInputs(positionals, values['stdin-name'] as string), options);
      const version = (require('../../../package.json') as { version: string }).version;
      process.stdout.write(format === 'json' ? renderLintJson(report) : format === 'sarif' ? renderLintSarif(report, version) : renderLintText(report));
      return failing(report, failOn).length > 0 ? 1 : 0;
    },
  );
}
