import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { REPO_ROOT } from './support/repo';
import ts from 'typescript';
import { renderLayersSvg } from './layers-svg';

/**
 * src/'s folders in their order, lowest first: a file may import from its own folder and from the
 * folders of the layers before its own, never from a layer after it (up) nor from another folder
 * of its own layer (sideways). Type-only imports count like any other: there are no exceptions.
 * Imports are resolved as TypeScript resolves them, over absolute paths, so one that leaves src/ and
 * comes back is judged where it lands. TypeScript does not refuse an import cycle: this order is our
 * compiler rule, and inside a folder, where the order allows any import, no file may reach itself
 * again (cycles below, type-only imports counted too). docs/architecture.md
 * says what each folder is; docs/architecture.svg draws this list (node dist/test/layers-svg-main.js).
 *
 * A folder owns its subfolders (plan/workload/ is plan/) unless the list names them: `lb/*` makes
 * each folder under lb/ its own folder (one per vendor), and `lb` then holds only the files
 * directly in lb/ (the registry). An entry may name one file: it has a place of its own, apart from
 * the rest of its folder (src/delivery/registry.ts sits above the delivery paths, the files it
 * shares with them below). `.` is src/ itself: the library entry, src/index.ts.
 */
export const LAYERS: ReadonlyArray<{ readonly name: string; readonly folders: readonly string[]; readonly holds: string }> = [
  { name: 'core', folders: ['core'], holds: 'errors, durations, bounded reads, JSON and paths, fixes, YAML output' },
  { name: 'contract', folders: ['contract'], holds: 'what the planner and the sidecar agree on: names, paths, bodies, the hc config, Envoy stat names' },
  { name: 'model', folders: ['model'], holds: 'derivations, the findings engine, the LB behaviour and vendor types, rollout feasibility' },
  { name: 'lb vendors', folders: ['lb/*'], holds: "one folder per LB vendor, planning side: schema, behaviour, findings, the vendor's words" },
  { name: 'lb registry', folders: ['lb'], holds: 'the vendors keyed by model: the LB block of the spec, behaviour, vendor rules and advice' },
  {
    name: 'loss',
    folders: ['loss'],
    holds: 'the loss model of one termination under traffic, every order (the simulation and its closed form), and of one new pod starting',
  },
  { name: 'schema', folders: ['schema'], holds: 'the gateway and workload specs (zod), parsing with a line for every problem' },
  { name: 'plan', folders: ['plan'], holds: 'pure planning: sequence, timings, rollout, timeline, findings; plan/workload/ for apps' },
  { name: 'lb-config', folders: ['lb-config'], holds: "what a finished plan asks of the LB, per vendor: lb-config text, the Service's annotations" },
  { name: 'pod', folders: ['pod'], holds: 'the pod changes a plan requires, as plain data, and applying them to a workload' },
  { name: 'emit', folders: ['emit'], holds: "the reports: PLAN.md, the plan's text and SVG, monitoring, containerd snippets" },
  {
    name: 'delivery shared',
    folders: ['delivery'],
    holds: "what the delivery paths share: rendered streams read and edited, the objects beside the pod, a path's shape",
  },
  { name: 'delivery paths', folders: ['delivery/*'], holds: 'one folder per delivery path: helm-values, post-render, kustomize, gateway-api, cdk8s, argocd' },
  {
    name: 'delivery registry',
    folders: ['delivery/registry.ts', 'delivery/library.ts'],
    holds: "every path keyed by name, which synth and the CLI read; the paths' part of the library",
  },
  { name: 'commands', folders: ['lint', 'simulate', 'verify', 'measure'], holds: 'what the commands of the same names compute' },
  { name: 'hc', folders: ['hc'], holds: 'the sidecar runtime: the state machine, the Envoy adapter, the servers' },
  { name: 'entries', folders: ['cli', '.'], holds: 'the command table and one module per command; src/index.ts, the library' },
];

const SRC = join(REPO_ROOT, 'src');

/** A module as the order sees it: its path under src/ (posix) and its text. */
export type Source = { path: string; text: string };

function sources(dir = SRC): Source[] {
  return readdirSync(dir).flatMap((f) => {
    const full = join(dir, f);
    if (statSync(full).isDirectory()) return sources(full);
    return f.endsWith('.ts') ? [{ path: relative(SRC, full).split(sep).join('/'), text: readFileSync(full, 'utf8') }] : [];
  });
}

/**
 * Every module specifier a file names, as TypeScript reads them (ts.preProcessFile): imports and
 * exports (type-only too), import() and require(); never a string in a comment.
 */
export function specifiers(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

const COMPILER_OPTIONS: ts.CompilerOptions = { module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10, resolveJsonModule: true };

/**
 * Where a relative specifier of `from` leads, by TypeScript's own module resolution over absolute
 * paths: the src/ module (posix, under src/), or `outside` naming where it went (an import that
 * leaves src/, even one that comes back by another route, is resolved, not dropped). The package's
 * own package.json, which the compiled code reads from dist/, is the one module outside src/.
 */
function target(from: string, specifier: string, known: ReadonlySet<string>): { module: string } | { outside: string } | undefined {
  if (posix.basename(specifier) === 'package.json') return undefined;
  const host: ts.ModuleResolutionHost = {
    fileExists: (f) => {
      const rel = relative(SRC, f).split(sep).join('/');
      return rel.startsWith('..') ? ts.sys.fileExists(f) : known.has(rel);
    },
    readFile: (f) => ts.sys.readFile(f),
  };
  const resolved = ts.resolveModuleName(specifier, join(SRC, from), COMPILER_OPTIONS, host).resolvedModule;
  if (!resolved) return { outside: `${specifier} (does not resolve)` };
  const rel = relative(SRC, resolved.resolvedFileName).split(sep).join('/');
  return rel.startsWith('..') ? { outside: relative(REPO_ROOT, resolved.resolvedFileName).split(sep).join('/') } : { module: rel };
}

/** The import graph of src/: each module and the src/ modules it names (relative specifiers only). */
function importGraph(all: readonly Source[]): Map<string, string[]> {
  const known = new Set(all.map((s) => s.path));
  return new Map(
    all.map((s) => [
      s.path,
      specifiers(s.text)
        .filter((x) => x.startsWith('.'))
        .flatMap((spec) => {
          const to = target(s.path, spec, known);
          return to && 'module' in to ? [to.module] : [];
        }),
    ]),
  );
}

/**
 * The import cycles between files, inside a folder or across (Tarjan's strongly connected
 * components; a module that imports itself is one too), each as its modules sorted.
 */
export function cycles(all: readonly Source[]): string[][] {
  const graph = importGraph(all);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1 || graph.get(v)!.includes(v)) found.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** The folders of the order, `lb/*` expanded over the folders `paths` has under lb/. */
function folders(paths: readonly string[]): Array<{ folder: string; layer: number }> {
  return LAYERS.flatMap((l, layer) =>
    l.folders.flatMap((f) => {
      if (!f.endsWith('/*')) return [{ folder: f, layer }];
      const parent = f.slice(0, -2);
      const children = new Set(paths.filter((p) => p.startsWith(`${parent}/`) && p.split('/').length > 2).map((p) => p.split('/').slice(0, 2).join('/')));
      return [...children].sort().map((folder) => ({ folder, layer }));
    }),
  );
}

/** A LAYERS entry that names one file rather than a folder. */
const isFile = (entry: string): boolean => entry.endsWith('.ts');

/**
 * The folder of the order a module belongs to: the file itself when the list names it, else the
 * longest listed folder holding it; `.` for src/'s own files.
 */
function folderOf(path: string, order: ReadonlyArray<{ folder: string; layer: number }>): { folder: string; layer: number } | undefined {
  const own = order.find((o) => o.folder === path);
  if (own) return own;
  const dir = posix.dirname(path);
  if (dir === '.') return order.find((o) => o.folder === '.');
  return order
    .filter((o) => o.folder !== '.' && !isFile(o.folder) && (dir === o.folder || dir.startsWith(`${o.folder}/`)))
    .sort((a, b) => b.folder.length - a.folder.length)[0];
}

/** Each import that points up or sideways, as `from -> to (why)`; modules outside the order are named too. */
export function violations(all: readonly Source[]): string[] {
  const known = new Set(all.map((s) => s.path));
  const order = folders([...known]);
  const out: string[] = [];
  for (const s of all) {
    const here = folderOf(s.path, order);
    if (!here) {
      out.push(`${s.path}: in no folder of the order`);
      continue;
    }
    for (const spec of specifiers(s.text).filter((x) => x.startsWith('.'))) {
      const resolved = target(s.path, spec, known);
      if (resolved === undefined) continue;
      if ('outside' in resolved) {
        out.push(`${s.path} -> ${resolved.outside}: leaves src/`);
        continue;
      }
      const to = resolved.module;
      const there = folderOf(to, order);
      if (!there) out.push(`${s.path} -> ${to}: in no folder of the order`);
      else if (there.folder === here.folder) continue;
      else if (there.layer > here.layer)
        out.push(`${s.path} -> ${to}: up (${here.folder} is layer ${LAYERS[here.layer]!.name}, ${there.folder} is ${LAYERS[there.layer]!.name})`);
      else if (there.layer === here.layer) out.push(`${s.path} -> ${to}: sideways (${here.folder} and ${there.folder} are both ${LAYERS[here.layer]!.name})`);
    }
  }
  return out;
}

/** The src/ modules `roots` load, following every relative import, and the packages they load. */
function closure(roots: readonly string[], all: readonly Source[]): { modules: Set<string>; packages: Set<string> } {
  const byPath = new Map(all.map((s) => [s.path, s] as const));
  const known = new Set(byPath.keys());
  const modules = new Set<string>();
  const packages = new Set<string>();
  const queue = [...roots];
  while (queue.length > 0) {
    const path = queue.pop()!;
    if (modules.has(path)) continue;
    modules.add(path);
    for (const spec of specifiers(byPath.get(path)?.text ?? '')) {
      if (!spec.startsWith('.')) packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
      else {
        const to = target(path, spec, known);
        if (to && 'module' in to) queue.push(to.module);
      }
    }
  }
  return { modules, packages };
}

test('every import in src/ points down the order or stays in its folder (type-only imports included)', () => {
  assert.deepEqual(violations(sources()), []);
});

test('no import cycle between files of src/, inside a folder or across (type-only imports included)', () => {
  assert.deepEqual(cycles(sources()), []);
});

test('a deliberate cycle, an import that leaves src/ and comes back, and one that leaves for good are caught', () => {
  const known = (extra: Source[]): Source[] => [...extra, { path: 'plan/plan-gateway.ts', text: '' }, { path: 'core/errors.ts', text: '' }];
  assert.deepEqual(
    cycles(
      known([
        { path: 'plan/a.ts', text: "import type { B } from './b';\n" },
        { path: 'plan/b.ts', text: "import { c } from './c';\n" },
        { path: 'plan/c.ts', text: "export { a } from './a';\n" },
        { path: 'plan/self.ts', text: "import './self';\n" },
      ]),
    ),
    [['plan/a.ts', 'plan/b.ts', 'plan/c.ts'], ['plan/self.ts']],
  );
  assert.deepEqual(cycles(known([{ path: 'plan/comment.ts', text: "// import './comment';\nexport const x = 'import \"./comment\"';\n" }])), []);
  assert.deepEqual(violations(known([{ path: 'model/around.ts', text: "import { planGateway } from '../../src/plan/plan-gateway';\n" }])), [
    'model/around.ts -> plan/plan-gateway.ts: up (model is layer model, plan is plan)',
  ]);
  assert.deepEqual(violations(known([{ path: 'core/leaves.ts', text: "import { REPO_ROOT } from '../../test/support/repo';\n" }])), [
    'core/leaves.ts -> test/support/repo.ts: leaves src/',
  ]);
});

test('every folder of src/ has its place in the order, and none has two', () => {
  const all = sources();
  const listed = folders(all.map((s) => s.path)).map((o) => o.folder);
  assert.equal(new Set(listed).size, listed.length, `listed twice: ${listed.join(', ')}`);
  const top = new Set(all.map((s) => (s.path.includes('/') ? s.path.split('/')[0]! : '.')));
  for (const t of top)
    assert.ok(
      listed.some((f) => f === t || f.startsWith(`${t}/`)),
      `src/${t}/ is in no layer`,
    );
});

test('a deliberate upward, sideways or type-only import is caught', () => {
  const fake = (path: string, text: string): Source[] => [
    { path, text },
    { path: 'plan/plan-gateway.ts', text: '' },
    { path: 'lb/nlb/schema.ts', text: '' },
    { path: 'lb/haproxy/schema.ts', text: '' },
    { path: 'core/errors.ts', text: '' },
  ];
  assert.deepEqual(violations(fake('model/upward.ts', "import { planGateway } from '../plan/plan-gateway';\n")), [
    'model/upward.ts -> plan/plan-gateway.ts: up (model is layer model, plan is plan)',
  ]);
  assert.equal(violations(fake('model/typed.ts', "import type { Plan } from '../plan/plan-gateway';\n")).length, 1);
  assert.equal(violations(fake('model/lazy.ts', "const p = require('../plan/plan-gateway') as typeof import('../plan/plan-gateway');\n")).length, 2);
  assert.deepEqual(violations(fake('lb/haproxy/side.ts', "export type { NlbLb } from '../nlb/schema';\n")), [
    'lb/haproxy/side.ts -> lb/nlb/schema.ts: sideways (lb/haproxy and lb/nlb are both lb vendors)',
  ]);
  assert.deepEqual(violations(fake('plan/down.ts', "import { GracegateError } from '../core/errors';\nimport './plan-gateway';\n")), []);
  // A file with a place of its own: the registry above the paths, the rest of its folder below them.
  const wing = (path: string, text: string): Source[] => [
    { path, text },
    { path: 'delivery/registry.ts', text: '' },
    { path: 'delivery/path.ts', text: '' },
    { path: 'delivery/kustomize/index.ts', text: '' },
  ];
  assert.deepEqual(violations(wing('delivery/shared.ts', "import { DELIVERY_PATHS } from './registry';\n")), [
    'delivery/shared.ts -> delivery/registry.ts: up (delivery is layer delivery shared, delivery/registry.ts is delivery registry)',
  ]);
  assert.deepEqual(violations(wing('delivery/kustomize/component.ts', "import { DELIVERY_PATHS } from '../registry';\n")).length, 1);
  assert.deepEqual(violations(wing('delivery/helm-values/index.ts', "import type { DeliveryPath } from '../path';\nimport '../kustomize';\n")), [
    'delivery/helm-values/index.ts -> delivery/kustomize/index.ts: sideways (delivery/helm-values and delivery/kustomize are both delivery paths)',
  ]);
  assert.deepEqual(violations(fake('nowhere/x.ts', '')), ['nowhere/x.ts: in no folder of the order']);
});

test('the hc sidecar loads nothing above the contract: no planner, LB vendor, pod changes, emitter, command or cdk8s', () => {
  const all = sources();
  const roots = all.filter((s) => s.path.startsWith('hc/')).map((s) => s.path);
  const { modules, packages } = closure(roots, all);
  const outside = [...modules].filter((m) => !['hc', 'contract', 'core'].includes(m.split('/')[0]!));
  assert.deepEqual(outside, []);
  assert.deepEqual(
    [...packages].filter((p) => ['cdk8s', 'cdk8s-plus-28', 'constructs', 'yaml'].includes(p)),
    [],
  );
});

test('plan, post-render, argocd, synth, hc and drain never load cdk8s: their commands reach no construct and no cdk8s package', () => {
  const all = sources();
  for (const command of ['plan', 'post-render', 'argocd', 'synth', 'hc', 'drain']) {
    const { modules, packages } = closure([`cli/${command}-command.ts`], all);
    // The registry holds the cdk8s path's description (its index.ts), which loads no construct.
    assert.deepEqual(
      [...modules].filter((m) => m.startsWith('delivery/cdk8s/') && m !== 'delivery/cdk8s/index.ts'),
      [],
      command,
    );
    assert.deepEqual(
      [...packages].filter((p) => ['cdk8s', 'cdk8s-plus-28', 'constructs'].includes(p)),
      [],
      command,
    );
  }
});

test('docs/architecture.svg is the picture of this order', () => {
  const committed = readFileSync(join(REPO_ROOT, 'docs', 'architecture.svg'), 'utf8');
  assert.equal(committed, renderLayersSvg(LAYERS), 'docs/architecture.svg is stale: node dist/test/layers-svg-main.js');
});
