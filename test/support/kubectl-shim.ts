/**
 * A `kubectl` for `gracegate verify --pod-state` tests: `get pods` lists the pods of a map, and
 * `exec -n NS POD -c gracegate-hc -- gracegate state --config /etc/gracegate/hc.json` runs the real
 * `gracegate state` with that pod's own config file (its sidecar's control port), as the container
 * would: the CLI's main(), what bin/gracegate.js calls, in this process (one Node start-up per
 * call, as kubectl exec's own cost, not two). Anything else fails like kubectl does. The map is the JSON file named by
 * GG_KUBECTL_SHIM: `{ "pods": { "<name>": "<hc config file>" }, "log": "<file>" }`; every call
 * is appended to the log, one JSON line each, so a test sees what ran.
 *
 * Run as `node kubectl-shim.js ...`; kubectlShim() writes an executable wrapper for --kubectl.
 */
import { appendFileSync, chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HC_CONFIG_PATH, HC_CONTAINER_NAME } from '../../src/pod/names';
import { REPO_ROOT } from './repo';

type ShimMap = { pods: Record<string, string>; log: string };

/** Writes `dir/kubectl` (a wrapper running this shim with `map`) and returns its path. */
export function kubectlShim(dir: string, map: ShimMap): string {
  const mapFile = join(dir, 'kubectl-shim.json');
  writeFileSync(mapFile, JSON.stringify(map));
  const bin = join(dir, 'kubectl');
  writeFileSync(bin, `#!/bin/sh\nGG_KUBECTL_SHIM='${mapFile}' exec '${process.execPath}' '${__filename}' "$@"\n`);
  chmodSync(bin, 0o755);
  return bin;
}

/** The log's lines: each call's argv and the exit status it got. */
export function shimCalls(log: string): Array<{ args: string[]; status: number; ran?: string[] }> {
  try {
    return readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { args: string[]; status: number; ran?: string[] });
  } catch {
    return [];
  }
}

async function main(args: string[]): Promise<number> {
  const map = JSON.parse(readFileSync(process.env['GG_KUBECTL_SHIM']!, 'utf8')) as ShimMap;
  const log = (status: number, ran?: string[]): number => {
    appendFileSync(map.log, `${JSON.stringify({ args, status, ...(ran ? { ran } : {}) })}\n`);
    return status;
  };
  if (args[0] === 'get' && args[1] === 'pods') {
    process.stdout.write(
      Object.keys(map.pods)
        .map((p) => `${p}\n`)
        .join(''),
    );
    return log(0);
  }
  const dashes = args.indexOf('--');
  if (args[0] === 'exec' && dashes > 0) {
    const [nFlag, pod, cFlag, container] = [args[1], args[3], args[4], args[5]];
    const command = args.slice(dashes + 1);
    const config = map.pods[pod ?? ''];
    if (nFlag !== '-n' || cFlag !== '-c' || container !== HC_CONTAINER_NAME || config === undefined) {
      process.stderr.write(`Error from server (NotFound): pods "${pod}" not found\n`);
      return log(1);
    }
    if (command.join(' ') !== `gracegate state --config ${HC_CONFIG_PATH}`) {
      process.stderr.write(`exec: ${command[0]}: not found in the sidecar image\n`);
      return log(126);
    }
    const ran = ['state', '--config', config];
    const cli = require(join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js')) as { main(argv: string[]): Promise<number> };
    return log(await cli.main(ran), ran);
  }
  process.stderr.write(`kubectl shim: unsupported: ${args.join(' ')}\n`);
  return log(1);
}

if (require.main === module)
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
