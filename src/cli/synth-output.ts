/**
 * Writing synth's files into `--out DIR` without touching anything synth did not write.
 *
 * DIR may be shared with the user's own files (a repo directory, a chart): synth used to replace
 * DIR as a whole whenever it held a `plan.json`, and a user's `src/main.go` and `README.md` went
 * with it. Now DIR keeps a manifest of what synth wrote
 * (`.gracegate-synth.json`), and a run
 *   - refuses, writing nothing, when a file it would write exists but is not in the manifest;
 *   - replaces its own files one by one (each written beside its place, then renamed over it; a new
 *     file is written in place, an unchanged one not at all);
 *   - deletes only files the manifest lists that this run no longer writes (and the directories that
 *     leaves empty);
 *   - records every file it may have written before writing it, so an interrupted run leaves a
 *     manifest that still covers its files, and the next run can finish the job.
 * Nothing is written or deleted through a symbolic link below DIR (synth creates none): a `kustomize/`
 * synth once wrote, replaced by a link to elsewhere, used to have the files outside deleted. Such a
 * run refuses, naming the link, before it writes anything.
 * Every file system error becomes a GracegateError naming the path (`--out /proc/x`, or a path below
 * a regular file, was an exit 1 with a stack trace).
 */
import * as fs from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { makeDirs } from '../core/make-dirs';
import { GracegateError } from '../core/errors';

export const MANIFEST_FILE = '.gracegate-synth.json';

interface Manifest {
  readonly writtenBy: 'gracegate synth';
  readonly files: readonly string[];
}

/** Where these problems are: the `--out` directory, named as the user gave it (the CLI then adds no command prefix). */
function outFlag(outDir: string): string {
  return `--out ${outDir}`;
}

function fsError(outDir: string, path: string, err: unknown): GracegateError {
  const e = err as NodeJS.ErrnoException;
  return new GracegateError(`cannot write ${path}: ${e.code ?? e.message}${e.code ? ` (${e.message.replace(/^[A-Z]+: /, '')})` : ''}`, outFlag(outDir));
}

function readManifest(outDir: string, dir: string): Set<string> {
  const file = join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Set();
    throw fsError(outDir, file, err);
  }
  try {
    const m = JSON.parse(text) as Manifest;
    if (m.writtenBy !== 'gracegate synth' || !Array.isArray(m.files) || !m.files.every((f) => typeof f === 'string')) throw new Error('not a synth manifest');
    // Only paths inside DIR: a hand-edited manifest must not make synth delete anything outside it.
    return new Set(m.files.filter((f) => f !== '' && !isAbsolute(f) && !f.split(/[\\/]/).includes('..')));
  } catch {
    throw new GracegateError(`${MANIFEST_FILE} is not a gracegate synth manifest; remove it, or choose another directory`, outFlag(outDir));
  }
}

function writeManifest(dir: string, files: Iterable<string>): void {
  writeIfChanged(join(dir, MANIFEST_FILE), `${JSON.stringify({ writtenBy: 'gracegate synth', files: [...new Set(files)].sort() }, null, 2)}\n`);
}

/**
 * Writes `text` to `path` unless the file already holds exactly that. An existing file is replaced
 * by a copy written beside it and renamed over it, so a reader never sees half of it; a new one is
 * written in place (there is no old content to half-replace, and an interrupted write is in the
 * manifest already, so the next run rewrites it). On a disk where each new file costs most of a
 * millisecond, the saved renames and unchanged files are most of a many-gateway run (bench/synth-fleet.ts).
 */
function writeIfChanged(path: string, text: string): void {
  let old: string | undefined;
  try {
    old = fs.readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (old === text) return;
  if (old === undefined) {
    makeDirs(dirname(path));
    fs.writeFileSync(path, text, { flag: 'wx' });
    return;
  }
  const tmp = `${path}.${process.pid}.synth-tmp`;
  try {
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, path);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** The first symbolic link on the way from `dir` (itself the user's to choose) to `rel`, or null. */
function linkOnTheWay(dir: string, rel: string): string | null {
  let at = dir;
  for (const part of rel.split(/[\\/]/).filter((p) => p !== '')) {
    at = join(at, part);
    const stat = fs.lstatSync(at, { throwIfNoEntry: false });
    if (!stat) return null;
    if (stat.isSymbolicLink()) return at;
  }
  return null;
}

/** Writes `files` (relative path → text) into `outDir` as described above. */
export function writeSynthOutput(outDir: string, files: Record<string, string>): void {
  const dir = resolve(outDir);
  const paths = Object.keys(files);
  try {
    const stat = fs.statSync(dir, { throwIfNoEntry: false });
    if (stat && !stat.isDirectory()) throw new GracegateError('exists and is not a directory', outFlag(outDir));
    const previous = stat ? readManifest(outDir, dir) : new Set<string>();
    const foreign = stat ? paths.filter((p) => !previous.has(p) && fs.existsSync(join(dir, p))) : [];
    if (foreign.length > 0) {
      throw new GracegateError(
        `refusing to replace ${foreign.join(', ')}: not written by gracegate synth (not in ${MANIFEST_FILE}); move ${foreign.length > 1 ? 'them' : 'it'} away, or choose another directory`,
        outFlag(outDir),
      );
    }
    if (stat) {
      const links = [...new Set([...paths, ...previous].map((p) => linkOnTheWay(dir, p)).filter((l): l is string => l !== null))];
      if (links.length > 0) {
        throw new GracegateError(
          `refusing to write or delete through ${links.map((l) => `${l} (a symbolic link)`).join(', ')}: gracegate synth created no link; replace ${links.length > 1 ? 'them' : 'it'} with a directory or file of its own, or choose another directory`,
          outFlag(outDir),
        );
      }
    }
    makeDirs(dir);
    // Every file this run may write is in the manifest before it is written.
    if (paths.some((p) => !previous.has(p))) writeManifest(dir, [...previous, ...paths]);
    for (const p of paths) writeIfChanged(join(dir, p), files[p]!);
    for (const stale of [...previous].filter((p) => !(p in files))) {
      fs.rmSync(join(dir, stale), { force: true });
      removeEmptyParents(dirname(join(dir, stale)), dir);
    }
    writeManifest(dir, paths);
  } catch (err) {
    if (err instanceof GracegateError) throw err;
    const path = (err as NodeJS.ErrnoException).path ?? dir;
    throw fsError(outDir, path, err);
  }
}

/**
 * Removes what synth wrote into `outDir` (the files its manifest lists, then the manifest) and the
 * directories that leaves empty, up to `stopAt`: for a gateway whose spec is gone. Anything synth did
 * not write stays, and so does the directory holding it.
 */
export function removeSynthOutput(outDir: string, stopAt: string): void {
  const dir = resolve(outDir);
  const top = resolve(stopAt);
  try {
    if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) return;
    for (const p of readManifest(outDir, dir)) {
      fs.rmSync(join(dir, p), { force: true });
      removeEmptyParents(dirname(join(dir, p)), dir);
    }
    fs.rmSync(join(dir, MANIFEST_FILE), { force: true });
    removeEmptyParents(dir, top);
  } catch (err) {
    if (err instanceof GracegateError) throw err;
    const path = (err as NodeJS.ErrnoException).path ?? dir;
    throw fsError(outDir, path, err);
  }
}

/** rmdir `from` and its parents while they are empty, never `stop` itself or above it. */
function removeEmptyParents(from: string, stop: string): void {
  for (let parent = from; parent !== stop && parent.startsWith(`${stop}/`); parent = dirname(parent)) {
    try {
      fs.rmdirSync(parent);
    } catch {
      return; // not empty: the user's files, or ours still there
    }
  }
}
