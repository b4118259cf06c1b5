/** Writes the CPU share benchmark's table into docs/manifests.md from docs/bench/hc-cpu-share-results.json. Run: node dist/bench/hc-cpu-share-docs-main.js */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HC_RESOURCES } from '../src/pod/pod-changes';
import { REPO_ROOT as root } from '../test/support/repo';
import { cpuShareTable, tableIn, type CpuShareResults } from './hc-cpu-share-table';

const docPath = join(root, 'docs/manifests.md');
const doc = readFileSync(docPath, 'utf8');
const old = tableIn(doc);
if (old === undefined) throw new Error('docs/manifests.md: no hc-cpu-share table markers');
const results = JSON.parse(readFileSync(join(root, 'docs/bench/hc-cpu-share-results.json'), 'utf8')) as CpuShareResults;
const limits: { cpu?: string; memory: string } = HC_RESOURCES.limits;
writeFileSync(docPath, doc.replace(old, cpuShareTable(results, { request: HC_RESOURCES.requests.cpu, limit: limits.cpu ?? null })));
