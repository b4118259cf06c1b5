#!/usr/bin/env node
'use strict';
// Launcher. A command runs from the single-file bundle `npm run build` makes (scripts/bundle.js):
// `gracegate hc` from dist/hc.cjs, the sidecar alone, as it is; every other command from
// dist/gracegate.cjs, compiled with V8's code cache beside it, so a start-up parses and compiles
// almost nothing. Without the bundles (a tsc-only build) it runs the compiled modules in dist/src.
const fs = require('node:fs');
const path = require('node:path');

const dist = path.join(__dirname, '..', 'dist');
const args = process.argv.slice(2);

/** The bundle's exports, or undefined when there is none. */
function loadBundle(name, withCodeCache) {
  const file = path.join(dist, name);
  let source;
  try {
    source = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  }
  const vm = require('node:vm');
  const Module = require('node:module');
  const hash = /^\/\* gracegate bundle ([0-9a-f]+) \*\//.exec(source);
  const cacheFile = withCodeCache && hash ? `${file}.${hash[1]}.cache` : undefined;
  let cachedData;
  try {
    if (cacheFile) cachedData = fs.readFileSync(cacheFile);
  } catch {
    // No cache yet: compiled as usual, and written below when it may be.
  }
  const script = new vm.Script(Module.wrap(source), { filename: file, cachedData });
  if (cacheFile && (cachedData === undefined || script.cachedDataRejected || process.env.GRACEGATE_CODE_CACHE === 'write')) {
    let writable = true;
    try {
      fs.accessSync(dist, fs.constants.W_OK);
    } catch {
      writable = false;
    }
    // At exit, so that the functions this run compiled are in it too; written whole or not at all.
    if (writable) {
      process.once('exit', () => {
        try {
          const tmp = `${cacheFile}.${process.pid}.tmp`;
          fs.writeFileSync(tmp, script.createCachedData());
          fs.renameSync(tmp, cacheFile);
        } catch {
          // A cache that cannot be written costs the next start-up its compile, nothing else.
        }
      });
    }
  }
  const module = { exports: {} };
  script.runInThisContext()(module.exports, Module.createRequire(file), module, file, dist);
  return module.exports;
}

const cli = (args[0] === 'hc' ? loadBundle('hc.cjs', false) : loadBundle('gracegate.cjs', true)) ?? require('../dist/src/cli/main.js');
cli.main(args).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`gracegate: ${err && err.stack ? err.stack : err}\n`);
    process.exitCode = 1;
  },
);
