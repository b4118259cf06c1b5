/**
 * A cdk8s Chart for tests that synthesise in memory (`Testing.synth`). cdk8s's `Testing.app()` and
 * `Testing.chart()` make a new empty `cdk8s.outdir.*` folder in the temp folder on every call and
 * never remove it (hundreds a run). An App writes its outdir only on `app.synth()`, which these
 * tests never call, so one path that is never created serves them all.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Chart, type ChartProps } from 'cdk8s';

const NEVER_WRITTEN = join(tmpdir(), 'gracegate-cdk8s-synth-in-memory');

export function testChart(props: ChartProps = {}): Chart {
  return new Chart(new App({ outdir: NEVER_WRITTEN }), 'test', props);
}
