#!/usr/bin/env node
'use strict';
// Thin launcher: the compiled CLI lives in dist/ (npm run build).
require('../dist/src/cli/main.js')
  .main(process.argv.slice(2))
  .then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`gracegate: ${err && err.stack ? err.stack : err}\n`);
      process.exitCode = 1;
    },
  );
