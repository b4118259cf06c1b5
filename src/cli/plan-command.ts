import { renderPlanText } from '../emit/plan-text';
import { textWidth } from '../emit/wrap';
import { blockingFindings } from '../plan/finding';
import { planGateway } from '../plan/plan-gateway';
import { failOnFlag, runParsedCommand, UsageError } from './args';
import { loadSpecFile } from './load-spec-file';

const USAGE = `usage: gracegate plan <gateway.yaml> [--format text|json] [--fail-on error|warning|info|none]

Chooses the termination sequence for the gateway's LB and computes every timing. The text is
wrapped to the terminal's width (COLUMNS when not a terminal, else 100).
Exit status: 0 plan printed, 1 a finding at or above --fail-on (default error), 2 bad input.
`;

export async function run(args: string[]): Promise<number> {
  return runParsedCommand(USAGE, args, {
    format: { type: 'string', default: 'text' },
    'fail-on': { type: 'string', default: 'error' },
  }, true, async ({ values, positionals }) => {
    const format = values.format as string;
    if (format !== 'text' && format !== 'json') throw new UsageError(`--format must be text or json, got '${format}'`);
    const failOn = failOnFlag(values['fail-on'] as string);
    if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'missing the gateway spec file' : 'plan takes exactly one spec file');

    const plan = planGateway(loadSpecFile(positionals[0]));
    process.stdout.write(format === 'json' ? `${JSON.stringify(plan, null, 2)}\n` : renderPlanText(plan, { width: textWidth(process.stdout) }));
    return blockingFindings(plan.findings, failOn).length > 0 ? 1 : 0;
  });
}
