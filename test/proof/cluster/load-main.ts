/**
 * The clients of a cluster run, as their own process inside the outside namespace (the test process
 * stays in the host's namespace, where no cluster address exists): the same LoadGenerator as
 * `gracegate verify` and the harness, through the LB's address. Options come as one JSON argument;
 * SIGTERM stops starting requests and lets the ones in flight finish (SIGINT cancels them). Its
 * first stdout line is `started <epoch ms>`, written when the workers start; when the last request
 * ended it prints the LoadResult as one JSON line.
 */
import { LoadGenerator, type LoadOptions } from '../../../src/verify/load';
import { CLUSTER_APP_PATHS } from './paths';

/** `path`: every request goes there (the report's probe load on the health NodePort) instead of the test app's paths. */
type Args = Omit<LoadOptions, 'paths'> & { path?: string };

async function main(): Promise<void> {
  const { path, ...args } = JSON.parse(process.argv[2] ?? '{}') as Args;
  const paths = path === undefined ? CLUSTER_APP_PATHS : { slow: () => path, stream: () => path };
  const load = new LoadGenerator({ ...args, paths });
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
