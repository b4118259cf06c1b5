/** Writes the pipelining benchmark's table into docs/hc.md from docs/bench/hc-pipeline-results.json. Run: node dist/bench/hc-pipeline-docs-main.js */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT as root } from '../test/support/repo';
import { pipelineTable, tableIn, type PipelineResults } from './hc-pipeline-table';

const docPath = join(root, 'docs/hc.md');
const doc = readFileSync(docPath, 'utf8');
const old = tableIn(doc);
if (old === undefined) throw new Error('docs/hc.md: no hc-pipeline table markers');
const results = JSON.parse(readFileSync(join(root, 'docs/bench/hc-pipeline-results.json'), 'utf8')) as PipelineResults;
writeFileSync(docPath, doc.replace(old, pipelineTable(results)));
