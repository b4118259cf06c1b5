import { EXIT_USAGE, runNamedCommand, type CommandModule } from './args';

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

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return `usage: gracegate <command> [options]\n\ncommands:\n${lines.join('\n')}\n\nRun 'gracegate <command> --help' for a command's options.\n`;
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name === undefined ? EXIT_USAGE : 0;
  }
  if (name === '--version') {
    process.stdout.write(`${require('../../../package.json').version}\n`);
    return 0;
  }
  const entry = commands[name];
  if (!entry) {
    process.stderr.write(`gracegate: unknown command '${name}'\n\n${usage()}`);
    return EXIT_USAGE;
  }
  return runNamedCommand(name, entry.load, rest);
}
