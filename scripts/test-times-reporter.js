'use strict';
// A reporter for node's test runner beside the spec reporter (scripts/run-tests.js): one JSON line
// per top-level test as it ends, with its file, name, outcome, duration, the time it ended and the
// machine's 1-minute load average then. The soak (test/soak) and the suite's schedule read it.
const { loadavg } = require('node:os');

module.exports = async function* testTimes(source) {
  for await (const event of source) {
    if ((event.type !== 'test:pass' && event.type !== 'test:fail') || event.data.nesting !== 0) continue;
    const { file, name, details } = event.data;
    yield `${JSON.stringify({ file, name, passed: event.type === 'test:pass', durationMs: Math.round(details?.duration_ms ?? 0), endedAtMs: Date.now(), loadAverage: loadavg()[0] })}\n`;
  }
};
