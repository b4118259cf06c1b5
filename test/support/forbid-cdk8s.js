// Preloaded with --require by tests of the light paths (plan, post-render, hc, drain):
// loading cdk8s there is a bug, so make it fail loudly.
'use strict';
const Module = require('node:module');
const original = Module._load;
Module._load = function load(request, ...rest) {
  if (/^(cdk8s|cdk8s-plus-28|constructs)(\/|$)/.test(request)) throw new Error(`light path loaded ${request}`);
  return original.call(this, request, ...rest);
};
