/**
 * `npm run cluster -- up [--bare] | down | status [--json] | exec CMD...`
 *   up       builds what is missing, starts the three-node cluster, installs CoreDNS, Istio and a
 *            gateway planned from examples/haproxy.yaml (--bare: stop after istiod)
 *   down     stops it and removes every trace (processes, mounts, namespaces, cgroups)
 *   status   what runs; --json: {"kubeconfig", "nodes": [{"name", "ip"}], "ready"}
 *   exec     runs CMD in the outside namespace (where the LB and the clients are) with KUBECONFIG
 *            set and .cache/tools (helm, kubectl) first on PATH
 */
import { spawnSync } from 'node:child_process';
import { down, status, up } from './cluster';
import { clusterEnv } from './kubectl';
import { OUTSIDE } from './layout';
import { leftovers } from './leftovers';
import { inNetns } from './sh';

const USAGE = 'usage: npm run cluster -- up [--bare] | down | status [--json] | exec CMD...';

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (process.getuid?.() !== 0) {
    process.stderr.write('cluster: needs root (network namespaces, mounts, cgroups)\n');
    return 2;
  }
  switch (command) {
    case 'up': {
      const unknown = rest.filter((a) => a !== '--bare');
      if (unknown.length > 0) break;
      const s = await up({ bare: rest.includes('--bare') });
      process.stdout.write(`${JSON.stringify({ kubeconfig: s.kubeconfig, nodes: s.nodes.map(({ name, ip }) => ({ name, ip })), ready: s.ready })}\n`);
      return s.ready ? 0 : 1;
    }
    case 'down': {
      if (rest.length > 0) break;
      await down();
      const left = leftovers();
      if (left.length > 0) {
        process.stderr.write(`cluster: down left these behind:\n${left.map((l) => `  ${l}`).join('\n')}\n`);
        return 1;
      }
      return 0;
    }
    case 'status': {
      const unknown = rest.filter((a) => a !== '--json');
      if (unknown.length > 0) break;
      const s = status();
      if (rest.includes('--json')) {
        process.stdout.write(`${JSON.stringify({ kubeconfig: s.kubeconfig, nodes: s.nodes.map(({ name, ip }) => ({ name, ip })), ready: s.ready })}\n`);
      } else {
        process.stdout.write(`ready: ${s.ready}\nkubeconfig: ${s.kubeconfig}\n`);
        for (const n of s.nodes) process.stdout.write(`node ${n.name} ${n.ip} ${n.ready ? 'Ready' : 'NotReady'}\n`);
        for (const d of s.daemons) process.stdout.write(`${d.running ? 'running' : 'exited '} ${d.name}\n`);
      }
      return s.ready ? 0 : 1;
    }
    case 'exec': {
      if (rest.length === 0) break;
      const [cmd, ...args] = inNetns(OUTSIDE.netns, rest[0]!, rest.slice(1));
      const res = spawnSync(cmd!, args, { stdio: 'inherit', env: clusterEnv() });
      return res.status ?? 1;
    }
    default:
      break;
  }
  process.stderr.write(`${USAGE}\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`cluster: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
