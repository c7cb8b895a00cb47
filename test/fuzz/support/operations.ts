import type { JsonObject } from '@svc/contracts';
import { DOCUMENT, resolve } from '../../support/contract';

/**
 * The operations the fuzzer aims at, read from the OpenAPI description the gateway serves: each
 * one's parameters (path, query, header) and request body, with `$ref`s resolved. Nothing about
 * an endpoint is written down here; a new operation or parameter is fuzzed as soon as the
 * description has it.
 */
export interface Parameter {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header' | 'cookie';
  readonly required: boolean;
  readonly schema: JsonObject;
}

export type Security = 'bearer' | 'partnerBasic' | 'clientCredentials' | 'memberSession' | 'none';

export interface Operation {
  readonly method: string;
  readonly template: string;
  readonly key: string;
  readonly parameters: readonly Parameter[];
  readonly body?: { readonly contentType: string; readonly schema: JsonObject; readonly required: boolean };
  readonly security: Security;
  /** Statuses the description lists for it (what the fuzzer may legitimately be answered). */
  readonly statuses: readonly string[];
}

function securityOf(op: JsonObject): Security {
  const alternatives = (op.security ?? []) as JsonObject[];
  const names = alternatives.flatMap((a) => Object.keys(a));
  if (names.includes('oauth2')) return 'bearer';
  if (names.includes('partnerBasic')) return 'partnerBasic';
  if (names.includes('clientBasic')) return 'clientCredentials';
  if (names.includes('memberSession')) return 'memberSession';
  return 'none';
}

export function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [template, item] of Object.entries(DOCUMENT.paths as Record<string, JsonObject>)) {
    for (const [method, raw] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const op = raw as JsonObject;
      const parameters = ((op.parameters ?? []) as JsonObject[]).map((p) => {
        const r = resolve(p);
        return {
          name: String(r.name),
          in: r.in as Parameter['in'],
          required: Boolean(r.required),
          schema: resolve((r.schema ?? {}) as JsonObject),
        };
      });
      const requestBody = op.requestBody ? resolve(op.requestBody as JsonObject) : undefined;
      const content = (requestBody?.content ?? {}) as Record<string, JsonObject>;
      const [contentType] = Object.keys(content);
      out.push({
        method: method.toUpperCase(),
        template,
        key: `${method.toUpperCase()} ${template}`,
        parameters,
        body: contentType
          ? {
              contentType,
              schema: (content[contentType].schema ?? {}) as JsonObject,
              required: Boolean(requestBody?.required),
            }
          : undefined,
        security: securityOf(op),
        statuses: Object.keys((op.responses ?? {}) as JsonObject),
      });
    }
  }
  return out;
}
