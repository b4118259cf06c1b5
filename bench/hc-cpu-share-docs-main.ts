/** Writes the CPU share benchmark's tables and the sentences around them into docs/manifests.md from docs/bench/hc-cpu-share-results.json. Run: node dist/bench/hc-cpu-share-docs-main.js */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HC_RESOURCES } from '../src/pod/pod-changes';
import { REPO_ROOT as root } from '../test/support/repo';
import { blockIn, cpuShareMethod, cpuShareReading, METHOD_BEGIN, METHOD_END, READING_BEGIN, READING_END } from './hc-cpu-share-prose';
import { cpuShareTable, tableIn, type CpuShareResults } from './hc-cpu-share-table';

const docPath = join(root, 'docs/manifests.md');
let doc = readFileSync(docPath, 'utf8');
const results = JSON.parse(readFileSync(join(root, 'docs/bench/hc-cpu-share-results.json'), 'utf8')) as CpuShareResults;
const limits: { cpu?: string; memory: string } = HC_RESOURCES.limits;
const chosen = { request: HC_RESOURCES.requests.cpu, limit: limits.cpu ?? null };
const blocks: [string | undefined, string][] = [
  [tableIn(doc), cpuShareTable(results, chosen)],
  [blockIn(doc, METHOD_BEGIN, METHOD_END), `${METHOD_BEGIN}\n${cpuShareMethod(results)}${METHOD_END}`],
  [blockIn(doc, READING_BEGIN, READING_END), `${READING_BEGIN}\n${cpuShareReading(results, chosen)}${READING_END}`],
];
for (const [old, generated] of blocks) {
  if (old === undefined) throw new Error(`docs/manifests.md: no markers for ${generated.split('\n')[0]}`);
  doc = doc.replace(old, generated);
}
writeFileSync(docPath, doc);
