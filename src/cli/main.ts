import { didYouMean } from '../schema/did-you-mean';
import { EXIT, EXIT_TABLE, EXIT_USAGE, runNamedCommand, type CommandModule } from './args';

export { EXIT_USAGE, type CommandModule };

/**
 * The command table. Each command lives in its own module and is loaded only when called. No
 * command loads cdk8s: it is for the constructs (a user's cdk8s app and `cdk8s synth`) only.
 */

type CommandEntry = { summary: string; load: () => CommandModule };

const commands: Record<string, CommandEntry> = {
  plan: { summary: 'choose the termination sequence and every timing for a gateway spec', load: () => require('./plan-command') },
  schema: { summary: 'print the JSON Schema of the gateway spec (for editor completion)', load: () => require('./schema-command') },
  synth: { summary: 'write the values overlay, manifests, containerd snippets and PLAN.md', load: () => require('./synth-command') },
  'lb-config': { summary: "print the LB-side settings the plan assumes, in the vendor's syntax", load: () => require('./lb-config-command') },
  measure: { summary: 'measure the long-request p99 from access logs or Prometheus (the one number you supply)', load: () => require('./measure-command') },
  hc: { summary: 'run the hc sidecar (health endpoints + drain controller)', load: () => require('./hc-command') },
  drain: { summary: 'preStop: start the drain sequence on the local sidecar and wait for it', load: () => require('./drain-command') },
  state: { summary: "print the local sidecar's GET /state as JSON (what kubectl exec runs in the hc container)", load: () => require('./state-command') },
  verify: {
    summary: 'drive a bounded load at your staging gateway while a pod terminates; count and classify every failed request',
    load: () => require('./verify-command'),
  },
  simulate: {
    summary: "estimate each termination order's request loss for your traffic with a model of the LB and the pod",
    load: () => require('./simulate-command'),
  },
  'post-render': { summary: 'Helm post-renderer: inject the plan into rendered manifests (stdin to stdout)', load: () => require('./post-render-command') },
  lint: {
    summary: 'find termination traps in rendered manifests (grace period, hooks, drain, probes, Services, rollout)',
    load: () => require('./lint-command'),
  },
  argocd: { summary: 'Argo CD config management plugin (argocd generate)', load: () => require('./argocd-command') },
};

const SYNOPSIS = 'usage: gracegate <command> [options]   (gracegate help <command> for its options)';

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    SYNOPSIS,
    '',
    'commands:',
    ...lines,
    '',
    'options:',
    '  -h, --help      this text; gracegate help <command> (or gracegate <command> --help) for a command',
    '  -v, --version   the version',
    '',
    EXIT_TABLE,
  ].join('\n');
}

const version = (): string => `${(require('../../../package.json') as { version: string }).version}\n`;

/** An unknown command: what was probably meant and the one line of usage, never the whole help. */
function unknownCommand(name: string): number {
  const near = didYouMean(name.replace(/^-+/, ''), Object.keys(commands));
  process.stderr.write(`gracegate: unknown command '${name}'${near ? `; did you mean '${near}'?` : ''}\n${SYNOPSIS}\nRun 'gracegate help' for the commands.\n`);
  return EXIT_USAGE;
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || (name === 'help' && rest.length === 0)) {
    process.stdout.write(usage());
    return name === undefined ? EXIT_USAGE : EXIT.done;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(version());
    return EXIT.done;
  }
  if (name === 'help') {
    // `gracegate help plan`: the command's own --help.
    const [topic, ...extra] = rest as [string, ...string[]];
    const entry = commands[topic];
    if (!entry || extra.length > 0) return unknownCommand(rest.join(' '));
    return runNamedCommand(topic, entry.load, ['--help']);
  }
  const entry = commands[name];
  if (!entry) return unknownCommand(name);
  return runNamedCommand(name, entry.load, rest);
}
