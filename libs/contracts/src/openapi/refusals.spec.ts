import { buildOpenApiDocument } from './document';
import type { JsonObject } from './kit';

/**
 * Answers that come before any handler, found by hostile input through the gateway: each must
 * be in the description of every operation it can reach.
 */
const document = buildOpenApiDocument({
  publicBaseUrl: 'https://api.example.test',
  docsUrl: 'https://docs.example.test',
});
const paths = document.paths as Record<string, Record<string, JsonObject>>;
const operations = Object.entries(paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({
    where: `${method.toUpperCase()} ${path}`,
    responses: op.responses as Record<string, JsonObject>,
  })),
);
const resolve = (node: JsonObject): JsonObject => {
  const target = node.$ref;
  if (typeof target !== 'string') return node;
  let found: unknown = document;
  for (const part of target.replace(/^#\//, '').split('/')) found = (found as JsonObject)[part];
  return resolve(found as JsonObject);
};

describe('answers refused before any handler', () => {
  it.each(operations)(
    "$where lists the gateway's 400 bad_request Problem (a request it does not pass on)",
    ({ responses }) => {
      const content = responses['400']?.content as Record<string, JsonObject> | undefined;
      const problem = content?.['application/problem+json']?.schema as JsonObject | undefined;
      expect(JSON.stringify(problem)).toContain('ProblemBadRequest');
    },
  );

  it('keeps the OAuth endpoints’ own 400 shapes beside the gateway’s Problem', () => {
    const token = paths['/oauth/token'].post.responses as Record<string, JsonObject>;
    const authorize = paths['/oauth/authorize'].get.responses as Record<string, JsonObject>;
    expect(Object.keys(token['400'].content as JsonObject).sort()).toEqual([
      'application/json',
      'application/problem+json',
    ]);
    expect(Object.keys(authorize['400'].content as JsonObject).sort()).toEqual([
      'application/problem+json',
      'text/html',
    ]);
  });

  it('does not require rate-limit headers on a seat 404 (an over-long seat id is refused before authentication)', () => {
    for (const method of ['get', 'delete']) {
      const notFound = (
        paths['/v1/partners/sponsorships/{sponsorship_id}'][method].responses as Record<string, JsonObject>
      )['404'];
      const headers = notFound.headers as Record<string, JsonObject>;
      expect(resolve(headers['X-RateLimit-Limit']).required).toBeFalsy();
    }
  });

  it('lists 415 on removing a seat, which takes no body, and 304 on /healthz (If-None-Match: *)', () => {
    const remove = paths['/v1/partners/sponsorships/{sponsorship_id}'].delete.responses as Record<
      string,
      JsonObject
    >;
    expect(remove['415']).toBeDefined();
    expect((paths['/healthz'].get.responses as Record<string, JsonObject>)['304']).toBeDefined();
  });
});
