// Lets a script require the TypeScript sources (apps/, libs/, scripts/**/*.ts) without a build:
// each .ts file is compiled with SWC on require, with the options of .swcrc, and `@svc/<lib>`
// resolves to libs/<lib>/src/index.ts as in tsconfig.base.json.
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const { transformSync } = require('@swc/core');
const { ROOT } = require('./deps.cjs');

const swcrc = JSON.parse(fs.readFileSync(path.join(ROOT, '.swcrc'), 'utf8'));
const { baseUrl: _baseUrl, paths: _paths, ...jsc } = swcrc.jsc;
const LIBS = /^@svc\/(contracts|platform|security)$/;

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const lib = LIBS.exec(request);
  return resolve.call(this, lib ? path.join(ROOT, 'libs', lib[1], 'src', 'index.ts') : request, ...rest);
};

Module._extensions['.ts'] = function (module, filename) {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    swcrc: false,
    sourceMaps: 'inline',
    module: { type: 'commonjs' },
    jsc,
  });
  module._compile(code, filename);
};
