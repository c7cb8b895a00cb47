// Lets a script require the TypeScript sources (apps/, libs/, scripts/**/*.ts) without a build,
// through Node's module hooks (`module.registerHooks`): each .ts file is compiled with SWC on
// load, with the options of .swcrc; `@svc/<lib>` resolves to libs/<lib>/src/index.ts as in
// tsconfig.base.json, and an import without extension inside a .ts file finds its .ts file (or
// folder's index.ts) as tsc does.
const fs = require('node:fs');
const path = require('node:path');
const { registerHooks } = require('node:module');
const { fileURLToPath, pathToFileURL } = require('node:url');
const { transformSync } = require('@swc/core');
const { ROOT } = require('./deps.cjs');

if (typeof registerHooks !== 'function') {
  throw new Error(`TypeScript sources load on the project's Node (.node-version), not on ${process.version}`);
}

const swcrc = JSON.parse(fs.readFileSync(path.join(ROOT, '.swcrc'), 'utf8'));
// The hook below resolves `@svc/<lib>` for every caller, plain JavaScript too.
const { baseUrl: _baseUrl, paths: _paths, ...jsc } = swcrc.jsc;
const LIBS = /^@svc\/(contracts|platform|security)$/;
const RELATIVE = /^\.\.?(\/|$)/;

registerHooks({
  resolve(specifier, context, nextResolve) {
    const lib = LIBS.exec(specifier);
    if (lib) {
      return {
        url: pathToFileURL(path.join(ROOT, 'libs', lib[1], 'src', 'index.ts')).href,
        shortCircuit: true,
      };
    }
    try {
      return nextResolve(specifier, context);
    } catch (err) {
      if (!RELATIVE.test(specifier) || !context.parentURL?.endsWith('.ts')) throw err;
      for (const candidate of [`${specifier}.ts`, `${specifier}/index.ts`]) {
        try {
          return nextResolve(candidate, context);
        } catch {
          // the next candidate, then the original error
        }
      }
      throw err;
    }
  },
  load(url, context, nextLoad) {
    if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
    const filename = fileURLToPath(url);
    const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
      filename,
      swcrc: false,
      sourceMaps: 'inline',
      module: { type: 'commonjs' },
      jsc,
    });
    return { format: 'commonjs', source: code, shortCircuit: true };
  },
});
