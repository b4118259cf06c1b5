import { renderPlanText } from '../emit/plan-text';
import { textWidth } from '../emit/wrap';
import { blockingFindings, type Finding } from '../model/finding';
import { planGateway } from '../plan/plan-gateway';
import { failOnFlag, runParsedCommand, UsageError } from './args';
import { loadAnySpecFile } from './load-spec-file';

const USAGE = `usage: gracegate plan <spec.yaml> [--format text|json|svg] [--fail-on error|warning|info|none]

Plans the termination the spec's kind describes: for a GracefulGateway, the sequence for its LB
and every timing; for a GracefulWorkload, the preStop, the app's shutdown timeout and the grace
period. The gateway's text is wrapped to the terminal's width (COLUMNS when not a terminal, else 100).
--format svg prints a GracefulGateway's timeline as one SVG document: the Kubernetes and LB clocks,
the six events, the waits with their numbers and where a request can still be lost.
Exit 1: a finding at or above --fail-on (default error).
`;

export async function run(args: string[]): Promise<number> {
  return runParsedCommand(
    USAGE,
    args,
    {
      format: { type: 'string', default: 'text' },
      'fail-on': { type: 'string', default: 'error' },
    },
    true,
    async ({ values, positionals }) => {
      const format = values.format as string;
      if (format !== 'text' && format !== 'json' && format !== 'svg') throw new UsageError(`--format must be text, json or svg, got '${format}'`);
      const failOn = failOnFlag(values['fail-on'] as string);
      if (positionals.length !== 1)
        throw new UsageError(positionals.length === 0 ? 'missing the spec file (a GracefulGateway or GracefulWorkload)' : 'plan takes exactly one spec file');

      const spec = loadAnySpecFile(positionals[0]);
      let plan: { findings: Finding[] };
      let text: string;
      if (spec.kind === 'GracefulGateway') {
        const p = planGateway(spec.resolved);
        // The SVG emitter (and its XML builder) and the workload planner load only when asked for.
        const svg = () => (require('../emit/plan-svg') as typeof import('../emit/plan-svg')).renderPlanSvg(p);
        [plan, text] = [p, format === 'text' ? renderPlanText(p, { width: textWidth(process.stdout) }) : format === 'svg' ? svg() : ''];
      } else {
        if (format === 'svg') throw new UsageError("--format svg draws a GracefulGateway's two clocks; a GracefulWorkload has text and json");
        const { planWorkload } = require('../plan/workload/plan-workload') as typeof import('../plan/workload/plan-workload');
        const { renderWorkloadPlanText } = require('../emit/workload/plan-text') as typeof import('../emit/workload/plan-text');
        const p = planWorkload(spec.resolved);
        [plan, text] = [p, format === 'text' ? renderWorkloadPlanText(p) : ''];
      }
      process.stdout.write(format === 'json' ? `${JSON.stringify(plan, null, 2)}\n` : text);
      return blockingFindings(plan.findings, failOn).length > 0 ? 1 : 0;
    },
  );
}
