/**
 * Preloaded into a benchmarked process (`node -r dist/bench/report-usage.js ...`): at exit it prints
 * its own CPU time and peak resident memory on stderr, one marked JSON line, so the benchmark
 * measures the process itself rather than the shell around it.
 */
process.on('exit', () => {
  const u = process.resourceUsage();
  process.stderr.write(`\nGRACEGATE_BENCH_USAGE ${JSON.stringify({ userMs: u.userCPUTime / 1000, systemMs: u.systemCPUTime / 1000, maxRssKiB: u.maxRSS })}\n`);
});
