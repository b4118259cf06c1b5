import { renderLbConfig, type ServerAddress } from '../lb-config';
import { planGateway } from '../plan/plan-gateway';
import { runParsedCommand, UsageError } from './args';
import { loadSpecFile } from './load-spec-file';

const USAGE = `usage: gracegate lb-config <gateway.yaml> [--backend-name NAME] [--servers HOST:PORT[@CHECKPORT],...]

Prints the LB-side settings the plan assumes, in the syntax of the spec's LB vendor (HAProxy
backend section, NetScaler CLI, tmsh, NLB Service annotations, Envoy cluster fields). Every line
carries a comment saying which plan assumption it serves.

  --backend-name NAME   backend / pool / service group name (default: the gateway's name)
  --servers LIST        gateway backends, comma-separated HOST:PORT (traffic port); @CHECKPORT
                        overrides the probe port for that server (default: the spec's health port)

`;

const SERVER = /^(\[[0-9a-fA-F:.]+\]|[^\s:@,[\]]+):(\d{1,5})(?:@(\d{1,5}))?$/;

function port(text: string, entry: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new UsageError(`--servers: '${entry}': port ${text} is outside 1-65535`);
  return n;
}

export function parseServers(list: string): ServerAddress[] {
  return list
    .split(',')
    .map((raw) => raw.trim())
    .filter((e) => e !== '')
    .map((entry) => {
      const m = SERVER.exec(entry);
      if (!m) throw new UsageError(`--servers: '${entry}' is not HOST:PORT or HOST:PORT@CHECKPORT`);
      return { host: m[1]!, port: port(m[2]!, entry), ...(m[3] !== undefined ? { checkPort: port(m[3], entry) } : {}) };
    });
}

export async function run(args: string[]): Promise<number> {
  return runParsedCommand(
    USAGE,
    args,
    {
      'backend-name': { type: 'string' },
      servers: { type: 'string' },
    },
    true,
    async ({ values, positionals }) => {
      if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'missing the gateway spec file' : 'lb-config takes exactly one spec file');
      const name = values['backend-name'] as string | undefined;
      if (name !== undefined && !/^[A-Za-z0-9_.:-]+$/.test(name)) throw new UsageError(`--backend-name '${name}' may hold only letters, digits, _ . : -`);
      const servers = values.servers !== undefined ? parseServers(values.servers as string) : [];

      const plan = planGateway(loadSpecFile(positionals[0]));
      process.stdout.write(renderLbConfig({ plan, servers, ...(name !== undefined ? { backendName: name } : {}) }));
      return 0;
    },
  );
}
