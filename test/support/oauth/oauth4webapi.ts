import type * as Oauth4webapi from 'oauth4webapi';

export type { Oauth4webapi };

/**
 * oauth4webapi, an independent OAuth 2.0 client, is published as ES modules only. Jest's module
 * registry (CommonJS here) cannot load it, so it is loaded with Node's own `require`, which
 * loads ES modules since Node 20.19 (require(esm)). It runs with Node's own globals (fetch,
 * URL, Response), exactly as a partner's server would run it.
 */
export function loadOauth4webapi(): typeof Oauth4webapi {
  const nodeModule = process.getBuiltinModule('node:module');
  return nodeModule.createRequire(__filename)('oauth4webapi') as typeof Oauth4webapi;
}
