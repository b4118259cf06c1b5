/** The human form of a P99Report (`gracegate measure p99` without --format json). */
import type { P99Report } from './p99-report';

const s = (seconds: number | null) => (seconds === null ? '-' : `${seconds.toFixed(3)} s`);

export function renderP99Text(r: P99Report): string {
  const out: string[] = [];
  const src = r.source;
  const from =
    src['kind'] === 'prometheus'
      ? `Prometheus ${String(src['url'])}, ${String(src['metric'])} over ${String(src['window'])}`
      : `${(src['files'] as string[]).length} access log(s) (${String(src['formats'])})`;
  out.push(`measured: ${from}`);
  if (r.window.from || r.window.to) out.push(`window:   ${r.window.from ?? '?'} .. ${r.window.to ?? '?'}`);
  out.push(`requests: ${r.samples}`);
  const files = src['kind'] === 'prometheus' ? [] : (src['files'] as string[]);
  // One file: `line 7`; several: `igw-1.log:7`.
  const at = (where: string) => (files.length === 1 && where.startsWith(`${files[0]}:`) ? `line ${where.slice(files[0]!.length + 1)}` : where);
  const skipped = r.skippedLines;
  if (skipped.count > 0) {
    const shapes = skipped.byShape.map((b) =>
      skipped.byShape.length === 1 ? `${b.shape}, e.g. ${at(b.first)}` : `${b.count} ${b.shape}, e.g. ${at(b.first)}`,
    );
    out.push(`skipped:  ${skipped.count} line${skipped.count === 1 ? '' : 's'} not in the access-log format (${shapes.join('; ')})`);
  }
  const invalid = r.invalidLines;
  if (invalid.count > 0)
    out.push(
      `invalid:  ${invalid.count} access-log line${invalid.count === 1 ? '' : 's'} not measured, their duration no number of ms up to ${invalid.boundMs} (e.g. ${at(invalid.first!)}: ${invalid.reason})`,
    );
  out.push(`duration: p50 ${s(r.p50Seconds)}, p99 ${s(r.p99Seconds)}, p99.9 ${s(r.p999Seconds)}, longest ${s(r.maxSeconds)}`);
  out.push('');
  out.push(`spec.traffic.longRequestP99Seconds: ${r.recommendedLongRequestP99Seconds}`);
  out.push(`  why: ${r.reason}`);
  if (r.recommendedRequestDurations)
    out.push(
      `spec.traffic.requestDurations: ${r.recommendedRequestDurations}`,
      '  why: the lengths the plan ranks its orders by: log-normal through p50 and p99, none longer than the longest',
    );
  for (const w of r.warnings) out.push(`  note: ${w}`);
  if (r.longestByRoute.length > 0) {
    out.push('', 'longest requests by route (p99, longest, requests):');
    const width = Math.max(...r.longestByRoute.map((x) => x.route.length));
    for (const x of r.longestByRoute) out.push(`  ${x.route.padEnd(width)}  ${s(x.p99Seconds).padStart(11)}  ${s(x.maxSeconds).padStart(11)}  ${x.requests}`);
  }
  if (r.longestRequests.length > 0) {
    out.push('', 'longest requests:');
    for (const x of r.longestRequests) out.push(`  ${s(x.seconds).padStart(11)}  ${x.startTime}  ${x.method} ${x.path} -> ${x.code} ${x.flags}  (${x.route})`);
  }
  if (r.grpc)
    out.push('', `gRPC calls (in the p99; name streaming methods with --stream-path to keep them apart): ${r.grpc.count}, p99 ${s(r.grpc.p99Seconds)}`);
  if (r.streams) {
    out.push(
      '',
      `long-lived streams, kept apart: ${r.streams.count} (${r.streams.upgrades} upgrades such as WebSocket, ${r.streams.byStreamPath} by --stream-path), p99 ${s(r.streams.p99Seconds)}, longest ${s(r.streams.maxSeconds)}`,
    );
    out.push(`  ${r.streams.note}`);
  }
  return `${out.join('\n')}\n`;
}
