/**
 * The clients of a cluster run, as their own process inside the outside namespace (the test process
 * stays in the host's namespace, where no cluster address exists): the same LoadGenerator as
 * `gracegate verify` and the harness, through the LB's address. Options come as one JSON argument;
 * SIGTERM stops starting requests and lets the ones in flight finish (SIGINT cancels them). When the
 * last one ended it prints the LoadResult as one JSON line on stdout, then `ready` lines never mix in:
 * the first stdout line is `started <epoch ms>`, written when the first workers start.
 */
import { LoadGenerator, type LoadOptions } from '../../src/verify/load';
import { CLUSTER_APP_PATHS } from './paths';

type Args = Omit<LoadOptions, 'paths'>;

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2] ?? '{}') as Args;
  const load = new LoadGenerator({ ...args, paths: CLUSTER_APP_PATHS });
  process.once('SIGTERM', () => load.stop());
  process.once('SIGINT', () => load.cancel());
  const running = load.run();
  process.stdout.write(`started ${Date.now()}\n`);
  const result = await running;
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`load: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
