/**
 * `gracegate measure p99`: the one number a user must supply, `spec.traffic.longRequestP99Seconds`,
 * measured from real traffic: Envoy access logs (Istio's text or JSON format) or a request-duration
 * histogram in Prometheus. docs/measure.md says what is measured and how streams are kept apart.
 */
import { renderP99Text } from '../measure/p99-text';
import { AccessLogSummary, type P99Report } from '../measure/p99-report';
import { kubectlPrefixNote } from '../measure/kubectl-prefix';
import { readAccessLogs } from './measure-access-logs';
import { HISTOGRAMS, measureFromPrometheus, type HistogramName } from './measure-prometheus';
import { DURATIONS_FIELD, P99_FIELD, writeLongRequestP99 } from './measure-write-spec';
import { GracegateError } from '../core/errors';
import { runParsedCommand, UsageError } from './args';

const USAGE = `usage: gracegate measure p99 --access-log FILE... [options]
       gracegate measure p99 --prometheus URL [--window 1d] [--selector 'k="v",...'] [options]

Measures the request-duration p99 of a gateway from real traffic and prints the value for
spec.traffic.longRequestP99Seconds, with the reason. Start here: the drain timeout and the grace
period follow from this one number (docs/measure.md).

sources (one of):
  --access-log FILE...  Envoy access logs in Istio's default text or JSON format (kubectl logs of the
                        gateway's istio-proxy); several files, or the flag repeated; - for standard
                        input; gzip-compressed files too; read streaming; kubectl's --prefix and
                        --timestamps are stripped (and said so); pilot-agent's and Envoy's own lines
                        among them are skipped and counted
  --prometheus URL      a Prometheus with istio_request_duration_milliseconds or Envoy's
                        downstream_rq_time histogram
options:
  --format text|json    output (default text); json has p99Seconds, p999Seconds, samples,
                        recommendedLongRequestP99Seconds
  --stream-path REGEX   request paths that are long-lived streams (SSE, gRPC streaming methods):
                        kept apart from the p99 like WebSocket upgrades (repeatable)
  --window RANGE        Prometheus range (default 1d; s, m, h, d, w)
  --selector MATCHERS   Prometheus label matchers without braces (default none)
  --histogram NAME      istio | envoy | auto (default auto: istio's, else Envoy's)
  --write SPEC          write the value into SPEC's spec.traffic.longRequestP99Seconds, and the
                        request lengths into spec.traffic.requestDurations, keeping its comments
                        and layout
Exit 2 also for: not one access-log line, no requests, an unreachable Prometheus, no such histogram,
a spec that would not validate.
`;

const RANGE = /^\d+[smhdwy]$/;

function regexFlag(value: string): RegExp {
  try {
    return new RegExp(value);
  } catch (err) {
    throw new UsageError(`--stream-path: not a regular expression: ${(err as Error).message}`);
  }
}

export async function run(args: string[]): Promise<number> {
  return runParsedCommand(
    USAGE,
    args,
    {
      'access-log': { type: 'string', multiple: true },
      prometheus: { type: 'string' },
      format: { type: 'string', default: 'text' },
      'stream-path': { type: 'string', multiple: true },
      window: { type: 'string', default: '1d' },
      selector: { type: 'string', default: '' },
      histogram: { type: 'string', default: 'auto' },
      write: { type: 'string' },
    },
    true,
    async ({ values, positionals }) => {
      const [what, ...extra] = positionals;
      if (what !== 'p99') throw new UsageError(what === undefined ? "missing what to measure: 'p99'" : `unknown measurement '${what}' (only 'p99')`);
      const format = values.format as string;
      if (format !== 'text' && format !== 'json') throw new UsageError(`--format must be text or json, got '${format}'`);
      const logs = [...((values['access-log'] as unknown as string[] | undefined) ?? []), ...extra];
      const prometheus = values.prometheus as string | undefined;
      if (logs.length === 0 && prometheus === undefined) throw new UsageError('missing a source: --access-log FILE... or --prometheus URL');
      if (logs.length > 0 && prometheus !== undefined) throw new UsageError('give one source: --access-log or --prometheus, not both');
      if (values['access-log'] === undefined && extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}' (files go after --access-log)`);

      let report: P99Report;
      if (prometheus !== undefined) {
        const window = values.window as string;
        if (!RANGE.test(window)) throw new UsageError(`--window must be a Prometheus range such as 1d or 6h, got '${window}'`);
        const histogram = values.histogram as string;
        if (histogram !== 'auto' && !(histogram in HISTOGRAMS)) throw new UsageError(`--histogram must be istio, envoy or auto, got '${histogram}'`);
        report = await measureFromPrometheus({ url: prometheus, window, selector: values.selector as string, histogram: histogram as HistogramName | 'auto' });
      } else {
        const streamPaths = ((values['stream-path'] as unknown as string[] | undefined) ?? []).map(regexFlag);
        const summary = new AccessLogSummary(streamPaths);
        const { formats, prefixes } = await readAccessLogs(logs, summary);
        const note = kubectlPrefixNote(prefixes);
        if (note) process.stderr.write(`gracegate measure: ${note}\n`);
        if (summary.requests.count === 0) {
          const invalid = summary.report({}).invalidLines;
          throw new GracegateError(
            `no requests in ${logs.join(', ')}: ${
              formats.length === 0
                ? 'the log is empty'
                : invalid.count > 0
                  ? `every access-log line was a long-lived stream or invalid (${invalid.count} invalid, first ${invalid.first}: ${invalid.reason})`
                  : 'every access-log line was a long-lived stream'
            }`,
          );
        }
        report = summary.report({ kind: 'access-log', files: logs, formats: formats.join(', ') });
      }

      const written = values.write as string | undefined;
      if (written !== undefined) {
        const previous = writeLongRequestP99(written, report.recommendedLongRequestP99Seconds, report.recommendedRequestDurations);
        process.stderr.write(
          `gracegate measure: wrote ${P99_FIELD.join('.')}: ${report.recommendedLongRequestP99Seconds}${report.recommendedRequestDurations ? ` and ${DURATIONS_FIELD.join('.')}: ${report.recommendedRequestDurations}` : ''} into ${written} (was ${previous === undefined ? 'unset' : String(previous)})\n`,
        );
      }
      process.stdout.write(format === 'json' ? `${JSON.stringify(report, null, 2)}\n` : renderP99Text(report));
      return 0;
    },
  );
}
