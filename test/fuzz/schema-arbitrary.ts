import fc from 'fast-check';
import type { JsonObject } from '@svc/contracts';
import { DOCUMENT, resolve } from '../support/contract';

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

/**
 * JSON Schema (the subset the OpenAPI description uses, `$ref`s into it followed) → fast-check
 * arbitraries: `validValue` draws values the schema accepts, `wrongValue` values of the wrong
 * shape for it. Both are generic; the description is the only source of what a field looks like,
 * so a field added or tightened there is fuzzed without a change here.
 */

/** Values worth trying for a property, by name: real ids and e-mails reach deeper than random text. */
export type Hints = Readonly<Record<string, readonly unknown[]>>;

const MAX_DEPTH = 4;
/** Arrays are kept short here; huge arrays are a mutation of their own. */
const MAX_ITEMS = 6;

const types = (s: JsonObject): string[] => {
  if (Array.isArray(s.type)) return s.type as string[];
  if (typeof s.type === 'string') return [s.type];
  if (s.properties) return ['object'];
  if (s.items) return ['array'];
  return ['string', 'integer', 'boolean', 'null'];
};

function numberBounds(s: JsonObject, fallback: number): { min: number; max: number } {
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  const min =
    num(s.minimum) ?? (num(s.exclusiveMinimum) !== undefined ? num(s.exclusiveMinimum)! + 1 : -fallback);
  const max =
    num(s.maximum) ?? (num(s.exclusiveMaximum) !== undefined ? num(s.exclusiveMaximum)! - 1 : fallback);
  return { min, max };
}

function validString(s: JsonObject): fc.Arbitrary<string> {
  const minLength = typeof s.minLength === 'number' ? s.minLength : 0;
  const maxLength = Math.max(minLength, Math.min(typeof s.maxLength === 'number' ? s.maxLength : 40, 40));
  const fits = (v: string) =>
    v.length >= minLength && (typeof s.maxLength !== 'number' || v.length <= s.maxLength);
  const formats: Record<string, () => fc.Arbitrary<string>> = {
    'date-time': () =>
      fc
        .date({
          min: new Date('2000-01-01T00:00:00Z'),
          max: new Date('2099-12-31T00:00:00Z'),
          noInvalidDate: true,
        })
        .map((d) => d.toISOString()),
    email: () => fc.emailAddress().filter(fits),
    uri: () => fc.webUrl().filter(fits),
  };
  if (typeof s.format === 'string' && formats[s.format]) return formats[s.format]();
  if (typeof s.pattern === 'string') return fc.stringMatching(new RegExp(s.pattern)).filter(fits);
  return fc.string({ minLength, maxLength });
}

function typedValue(type: string, s: JsonObject, hints: Hints, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      const { min, max } = numberBounds(s, 1_000_000);
      return fc.integer({ min, max });
    }
    case 'number': {
      const { min, max } = numberBounds(s, 1_000_000);
      return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
    }
    case 'string':
      return validString(s);
    case 'array': {
      const minLength = typeof s.minItems === 'number' ? s.minItems : 0;
      const maxLength = Math.max(
        minLength,
        Math.min(typeof s.maxItems === 'number' ? s.maxItems : MAX_ITEMS, MAX_ITEMS),
      );
      if (depth >= MAX_DEPTH) return fc.constant([]);
      const items = s.items ? validValue(s.items as JsonObject, hints, depth + 1) : fc.string();
      return fc.array(items, { minLength, maxLength });
    }
    case 'object': {
      const properties = (s.properties ?? {}) as Record<string, JsonObject>;
      const required = new Set((s.required ?? []) as string[]);
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, prop] of Object.entries(properties)) {
        model[name] = hinted(name, validValue(prop, hints, depth + 1), hints);
      }
      const record = fc.record(model, {
        requiredKeys: Object.keys(properties).filter((k) => required.has(k)),
      });
      const extra = s.additionalProperties;
      if (extra && typeof extra === 'object' && depth < MAX_DEPTH) {
        const more = fc.dictionary(
          fc.string({ minLength: 1, maxLength: 12 }),
          validValue(extra as JsonObject, hints, depth + 1),
          {
            maxKeys: 3,
          },
        );
        return fc.tuple(more, record).map(([a, b]) => ({ ...a, ...b }));
      }
      return record;
    }
    default:
      return fc.constant(null);
  }
}

/** `own`, or now and then one of the values hinted for `name`. */
export function hinted(name: string, own: fc.Arbitrary<unknown>, hints: Hints): fc.Arbitrary<unknown> {
  const values = hints[name];
  return values?.length ? fc.oneof(fc.constantFrom(...values), own) : own;
}

/** A value the schema accepts (formats and patterns included, lengths capped for speed). */
export function validValue(schema: JsonObject, hints: Hints = {}, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema);
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const alternatives = (s.oneOf ?? s.anyOf) as JsonObject[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((a) => validValue(a, hints, depth + 1)));
  if (Array.isArray(s.allOf)) return validValue((s.allOf as JsonObject[])[0], hints, depth + 1);
  return fc.oneof(...types(s).map((t) => typedValue(t, s, hints, depth)));
}

/** Values hostile to any field: other types, edges of numbers and text, long and odd strings. */
export const anyHostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    null,
    true,
    false,
    0,
    -1,
    1.5,
    1e308,
    -1e308,
    Number.MAX_SAFE_INTEGER + 2,
    '',
    ' ',
    '\u0000',
    '\ud800',
    '\u202e',
    '%00',
    '../../etc/passwd',
    '{"$gt":""}',
    '__proto__',
    'constructor',
    [],
    {},
    { __proto__: null },
  ),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.integer({ min: 201, max: 1_000_000 }).map((n) => 'x'.repeat(n % 5000)),
  fc.array(fc.anything({ maxDepth: 2 }), { maxLength: 4 }),
  fc.jsonValue({ maxDepth: 3 }),
);

/** A value of another type than the schema allows (or an edge the schema refuses), when one exists. */
export function wrongValue(schema: JsonObject): fc.Arbitrary<unknown> {
  const s = resolve(schema);
  const allowed = new Set(types(s));
  const others: fc.Arbitrary<unknown>[] = [];
  if (!allowed.has('string')) others.push(fc.string({ maxLength: 20 }));
  if (!allowed.has('integer') && !allowed.has('number')) others.push(fc.integer());
  if (allowed.has('integer')) others.push(fc.constantFrom(0.5, 1e21, -0.0001, '1'));
  if (!allowed.has('boolean')) others.push(fc.boolean());
  if (!allowed.has('null')) others.push(fc.constant(null));
  if (!allowed.has('array')) others.push(fc.array(fc.integer(), { maxLength: 3 }));
  if (!allowed.has('object')) others.push(fc.constant({ a: 1 }));
  if (typeof s.maxLength === 'number') others.push(fc.constant('y'.repeat(s.maxLength + 1)));
  if (typeof s.minimum === 'number') others.push(fc.constant(s.minimum - 1));
  if (typeof s.maximum === 'number') others.push(fc.constant(s.maximum + 1));
  if (Array.isArray(s.enum)) others.push(fc.constant('not-one-of-them'));
  others.push(anyHostileValue);
  return fc.oneof(...others);
}
