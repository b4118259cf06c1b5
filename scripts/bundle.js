#!/usr/bin/env node
'use strict';
/*
 * Bundles the compiled CLI (after tsc, as `npm run build` runs it) into two single files, so a
 * command starts without resolving and reading some 170 modules one by one:
 *   dist/gracegate.cjs  every command (bin/gracegate.js loads it with V8's code cache)
 *   dist/hc.cjs         `gracegate hc` alone: the sidecar loads nothing it does not run
 * with esbuild, the standard bundler. zod's translations (zod/locales, some 50 modules nothing in
 * gracegate uses: its messages are gracegate's own, src/errors.ts) are left out of both.
 * The first line of each bundle names a hash of its content: the code cache is kept under it,
 * so a rebuilt bundle never meets the cache of another (V8 checks a cache against the source's
 * length only).
 * Then the code cache of dist/gracegate.cjs is made by running a few light commands once
 * (GRACEGATE_CODE_CACHE=write); where the cache is missing or rejected (another Node), a run
 * writes it again when it may, and compiles as usual meanwhile.
 *   node scripts/bundle.js [--no-cache]
 */
const { spawnSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const esbuild = require('esbuild');

const root = path.join(__dirname, '..');
const dist = path.join(root, 'dist');

/** zod's classic API re-exports every locale as `z.locales`; gracegate never reads it. */
const noZodLocales = {
  name: 'no-zod-locales',
  setup(build) {
    build.onResolve({ filter: /\/locales\/index\.c?js$/ }, (args) =>
      args.importer.includes(`${path.sep}zod${path.sep}`) ? { path: args.path, namespace: 'no-zod-locales' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'no-zod-locales' }, () => ({ contents: 'module.exports = {};', loader: 'js' }));
  },
};

const BUNDLES = [
  { out: 'gracegate.cjs', entry: { entryPoints: [path.join(dist, 'src', 'cli', 'main.js')] } },
  {
    out: 'hc.cjs',
    entry: {
      stdin: {
        contents:
          "const { runNamedCommand } = require('./src/cli/args.js');\nexports.main = (args) => runNamedCommand('hc', () => require('./src/cli/hc-command.js'), args.slice(1));\n",
        resolveDir: dist,
        sourcefile: 'hc-entry.js',
      },
    },
  },
];

async function bundle() {
  for (const b of BUNDLES) {
    const file = path.join(dist, b.out);
    const result = await esbuild.build({
      ...b.entry,
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      write: false,
      plugins: [noZodLocales],
      logLevel: 'warning',
      legalComments: 'none',
      minifyWhitespace: true,
      minifySyntax: true,
      keepNames: true,
    });
    const code = result.outputFiles[0].text;
    const hash = createHash('sha256').update(code).digest('hex').slice(0, 16);
    for (const old of fs.readdirSync(dist)) if (old.startsWith(`${b.out}.`) && old.endsWith('.cache')) fs.rmSync(path.join(dist, old));
    fs.writeFileSync(file, `/* gracegate bundle ${hash} */\n${code}`);
  }
}

/** Runs light commands through bin/gracegate.js so that their functions land in the code cache. */
function trainCodeCache() {
  const manifests = [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata: {name: igw-public, namespace: istio-ingress}',
    'spec:',
    '  selector: {matchLabels: {app: igw-public, istio: igw-public}}',
    '  template:',
    '    metadata: {labels: {app: igw-public, istio: igw-public}}',
    '    spec: {containers: [{name: istio-proxy, image: auto}]}',
    '',
  ].join('\n');
  const spec = path.join(root, 'examples', 'haproxy.yaml');
  const runs = [
    [['plan', spec], ''],
    [['post-render', '--spec', spec], manifests],
    [['lint', '-'], manifests],
    [['lb-config', spec], ''],
  ];
  for (const [args, input] of runs) {
    const r = spawnSync(process.execPath, [path.join(root, 'bin', 'gracegate.js'), ...args], {
      input,
      encoding: 'utf8',
      env: { ...process.env, GRACEGATE_CODE_CACHE: 'write' },
    });
    // lint exits 1 on findings, as it should here.
    if (r.status !== 0 && r.status !== 1) throw new Error(`bundle: gracegate ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  }
}

bundle().then(
  () => {
    if (!process.argv.includes('--no-cache')) trainCodeCache();
  },
  (err) => {
    process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  },
);
