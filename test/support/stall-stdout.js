// Preloaded with --require by the deadline test: the first write to stdout never returns (a busy
// loop on the main thread, where no timer can fire), standing for any step that runs too long.
'use strict';
process.stdout.write = () => {
  for (;;) {
    // spin
  }
};
