/**
 * `gracegate synth DIR --out OUT`: every spec in a directory tree, one process, one output tree.
 *
 * Each `*.yaml` / `*.yml` under DIR is a spec and gets `OUT/<its path without the extension>/`,
 * written exactly as `gracegate synth FILE --out that/dir` writes it (src/cli/synth-output.ts: its own
 * `.gracegate-synth.json`, never a file synth did not write). A bad spec is reported with its file
 * and the others are still written; the exit status is the worst of them. `--fail-fast` renders
 * everything first and writes nothing unless every spec renders.
 *
 * OUT keeps one more manifest, `.gracegate-synth-tree.json`: the gateway directories the last run
 * wrote. A gateway whose spec is gone has its files removed (only those its own manifest lists);
 * one whose spec is still there but bad keeps its last good output.
 */
import * as fs from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { GracegateError } from '../core/errors';
import { makeDirs } from '../core/make-dirs';
import { removeSynthOutput, writeSynthOutput } from './synth-output';

export const TREE_MANIFEST_FILE = '.gracegate-synth-tree.json';
/** A synth output directory (a gateway's, or a tree's) holds one of these: never read as specs. */
const OUTPUT_MARKERS = ['.gracegate-synth.json', TREE_MANIFEST_FILE];

/** Bounds on the walk: far above a real fleet, low enough that a wrong DIR (/) ends quickly. */
export const MAX_SPECS = 100_000;
export const MAX_DEPTH = 32;

export type TreeSpec = {
  /** The spec file as found (DIR joined with its relative path). */
  file: string;
  /** Its output directory relative to OUT: the relative path without `.yaml` / `.yml`, `/`-separated. */
  gateway: string;
};

/**
 * What rendering one spec gave: its files, or the findings that block it (already worded); the
 * warnings and errors it is written with (worded, to print before "wrote"), and the plan's summary line.
 */
export type Rendered = { files: Record<string, string>; blocked?: string; note?: string; findings?: string[]; summary?: string };

export type TreeOptions = {
  failFast: boolean;
  render(file: string): Rendered;
  out: (line: string) => void;
  err: (line: string) => void;
};

const isSpec = (name: string) => /\.ya?ml$/.test(name) && !name.startsWith('.');

/** Every spec under `dir`, sorted, skipping dot entries, symbolic links, OUT and earlier synth outputs. */
export function findSpecs(dir: string, outDir: string): TreeSpec[] {
  const root = resolve(dir);
  const skip = resolve(outDir);
  const found: TreeSpec[] = [];
  const walk = (abs: string, depth: number): void => {
    if (depth > MAX_DEPTH) throw new GracegateError(`deeper than ${MAX_DEPTH} directories at ${relative(root, abs)}: is this the gateways' directory?`, dir);
    const entries = fs.readdirSync(abs, { withFileTypes: true });
    if (abs !== root && entries.some((e) => OUTPUT_MARKERS.includes(e.name))) return;
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (e.name.startsWith('.')) continue;
      const child = join(abs, e.name);
      if (e.isDirectory()) {
        if (resolve(child) !== skip) walk(child, depth + 1);
      } else if (e.isFile() && isSpec(e.name)) {
        if (found.length >= MAX_SPECS) throw new GracegateError(`more than ${MAX_SPECS} spec files: is this the gateways' directory?`, dir);
        found.push({
          file: join(dir, relative(root, child)),
          gateway: relative(root, child)
            .split(sep)
            .join('/')
            .replace(/\.ya?ml$/, ''),
        });
      }
    }
  };
  try {
    walk(root, 0);
  } catch (err) {
    if (err instanceof GracegateError) throw err;
    const e = err as NodeJS.ErrnoException;
    throw new GracegateError(`cannot read: ${e.code ?? e.message}${e.path ? ` (${e.path})` : ''}`, dir);
  }
  return found;
}

/** Two specs that would share an output directory (`a.yaml` and `a.yml`): both are refused. */
function clashes(specs: TreeSpec[]): Map<string, string> {
  const byGateway = new Map<string, TreeSpec[]>();
  for (const s of specs) byGateway.set(s.gateway, [...(byGateway.get(s.gateway) ?? []), s]);
  const out = new Map<string, string>();
  for (const [gateway, list] of byGateway) {
    if (list.length > 1) for (const s of list) out.set(s.file, `${list.map((x) => x.file).join(' and ')} would both write ${gateway}/: rename one`);
  }
  return out;
}

function readTreeManifest(outDir: string): string[] {
  let text: string;
  try {
    text = fs.readFileSync(join(outDir, TREE_MANIFEST_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw err;
  }
  try {
    const m = JSON.parse(text) as { writtenBy?: unknown; gateways?: unknown };
    if (m.writtenBy !== 'gracegate synth' || !Array.isArray(m.gateways) || !m.gateways.every((g) => typeof g === 'string'))
      throw new Error('not a tree manifest');
    // Only directories inside OUT: a hand-edited manifest must not point synth outside it.
    return (m.gateways as string[]).filter((g) => g !== '' && !isAbsolute(g) && !g.split(/[\\/]/).includes('..'));
  } catch {
    throw new GracegateError(`${TREE_MANIFEST_FILE} is not a gracegate synth tree manifest; remove it, or choose another directory`, `--out ${outDir}`);
  }
}

function writeTreeManifest(outDir: string, gateways: Iterable<string>): void {
  makeDirs(outDir);
  const path = join(outDir, TREE_MANIFEST_FILE);
  const tmp = `${path}.${process.pid}.synth-tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify({ writtenBy: 'gracegate synth', gateways: [...new Set(gateways)].sort() }, null, 2)}\n`);
  fs.renameSync(tmp, path);
}

/** Renders one spec; a GracegateError becomes its lines (each already naming the file). */
function attempt(spec: TreeSpec, options: TreeOptions): { rendered?: Rendered; problem?: string; status: number } {
  try {
    const rendered = options.render(spec.file);
    return rendered.blocked !== undefined ? { problem: rendered.blocked, status: 1 } : { rendered, status: 0 };
  } catch (err) {
    if (!(err instanceof GracegateError)) throw err;
    return { problem: err.lines(spec.file).join('\n'), status: 2 };
  }
}

/**
 * Synthesises every spec under `dir` into `outDir`. Returns the exit status: 0 all written, 1 a
 * finding at or above --fail-on held a gateway back (nothing of it written), 2 bad input somewhere.
 */
export function synthTree(dir: string, outDir: string, options: TreeOptions): number {
  const specs = findSpecs(dir, outDir);
  if (specs.length === 0) throw new GracegateError('no spec files (*.yaml, *.yml) in this directory tree', dir);
  const clash = clashes(specs);
  let worst = 0;
  const fail = (problem: string, status: number) => {
    options.err(problem);
    worst = Math.max(worst, status);
  };

  if (options.failFast) {
    // Everything is rendered first; the first spec that fails stops the run with nothing written.
    for (const spec of specs) {
      const clashing = clash.get(spec.file);
      const r = clashing ? { problem: `${spec.file}: ${clashing}`, status: 2 } : attempt(spec, options);
      if (r.status !== 0) {
        fail(r.problem!, r.status);
        options.err(`gracegate synth: stopped at ${spec.file} (--fail-fast); nothing written`);
        return worst;
      }
    }
  }

  const stat = fs.statSync(outDir, { throwIfNoEntry: false });
  if (stat && !stat.isDirectory()) throw new GracegateError('exists and is not a directory', `--out ${outDir}`);
  const previousList = readTreeManifest(outDir);
  const previous = new Set(previousList);
  const written = new Set<string>();
  let done = 0;
  for (const spec of specs) {
    const clashing = clash.get(spec.file);
    const r = clashing ? { problem: `${spec.file}: ${clashing}`, status: 2 } : attempt(spec, options);
    // A spec that is there but bad keeps its last output, and its place in the tree manifest.
    if (previous.has(spec.gateway)) written.add(spec.gateway);
    if (r.status !== 0) {
      fail(r.problem!, r.status);
      continue;
    }
    const target = join(outDir, spec.gateway);
    // As for one spec: what the plan found, and what it is, before what was written.
    for (const finding of r.rendered!.findings ?? []) options.err(finding);
    if (r.rendered!.summary) options.out(r.rendered!.summary);
    try {
      writeSynthOutput(target, r.rendered!.files);
    } catch (err) {
      if (!(err instanceof GracegateError)) throw err;
      fail(err.lines(spec.file).join('\n'), 2);
      continue;
    }
    written.add(spec.gateway);
    done++;
    options.out(`wrote ${target}/ (${Object.keys(r.rendered!.files).length} files) from ${spec.file}`);
    // What the user must still do for this gateway (a Gateway API Gateway's parametersRef), as for one spec.
    if (r.rendered!.note) options.out(`  Gateway: ${r.rendered!.note}`);
  }

  const present = new Set(specs.map((s) => s.gateway));
  for (const gone of previousList.filter((g) => !present.has(g))) {
    try {
      removeSynthOutput(join(outDir, gone), outDir);
      options.out(`removed ${join(outDir, gone)}/ (its spec is gone)`);
    } catch (err) {
      if (!(err instanceof GracegateError)) throw err;
      written.add(gone);
      fail(err.lines(`--out ${outDir}`).join('\n'), 2);
    }
  }
  try {
    writeTreeManifest(outDir, written);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    fail(`--out ${outDir}: cannot write ${TREE_MANIFEST_FILE}: ${e.code ?? e.message}`, 2);
  }
  if (worst > 0) options.err(`gracegate synth: ${done} of ${specs.length} gateways written to ${outDir}; ${specs.length - done} not (listed above)`);
  return worst;
}
