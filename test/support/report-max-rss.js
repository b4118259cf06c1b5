// Preloaded with --require by tests that hold a command to a memory bound: at exit, the process's
// peak resident set (maxRSS, in KiB) on stderr as `gracegate-test maxRSS <KiB>`.
'use strict';
process.on('exit', () => process.stderr.write(`gracegate-test maxRSS ${process.resourceUsage().maxRSS}\n`));
