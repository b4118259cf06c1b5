/**
 * Regenerates charts/gracegate-example/ with the standard `cdk8s synth --format helm`.
 *
 * cdk8s-cli names the chart after the directory it runs in, so it is run from a temporary
 * directory named after the chart: the result is the same on every checkout, whatever the
 * repository's folder is called. Usage: node dist/examples/cdk8s-app/synth-helm-chart.js [DEST]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { EXAMPLE_CHART_NAME } from './main';

const REPO_ROOT = resolve(__dirname, '..', '..', '..');

export function synthExampleChart(dest: string): void {
  const version = (require(join(REPO_ROOT, 'package.json')) as { version: string }).version;
  const work = mkdtempSync(join(tmpdir(), 'gracegate-chart-'));
  try {
    const cwd = join(work, EXAMPLE_CHART_NAME);
    mkdirSync(cwd);
    const cli = join(REPO_ROOT, 'node_modules', 'cdk8s-cli', 'bin', 'cdk8s');
    // cdk8s-cli runs --app through a shell as one string; the paths are ours and hold no spaces.
    const app = `${process.execPath} ${join(__dirname, 'main.js')}`;
    // --no-check-upgrade: no registry look-up on every run (tests and CI run offline).
    const result = spawnSync(
      process.execPath,
      [cli, '--no-check-upgrade', 'synth', '--app', app, '--format', 'helm', '--chart-version', version, '--output', resolve(dest)],
      {
        cwd,
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    if (result.status !== 0) throw new Error(`cdk8s synth failed (${result.status ?? result.signal}): ${result.stderr}${result.stdout}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (require.main === module) synthExampleChart(process.argv[2] ?? join(REPO_ROOT, 'charts', EXAMPLE_CHART_NAME));
