import { API_LIMITS } from '../limits';
import { PROBLEMS, type ProblemCode } from '../problems';
import { REQUEST_ID_PATTERN } from '../request-id';
import { PROBLEM_GUIDE } from './problem-guide';

/** A JSON value of the document; the builders below keep the document plain data. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json | undefined };
export type JsonObject = { [key: string]: Json | undefined };

export const ref = (kind: 'schemas' | 'headers' | 'parameters' | 'responses', name: string): JsonObject => ({
  $ref: `#/components/${kind}/${name}`,
});
export const schemaRef = (name: string) => ref('schemas', name);

declare const SHAPE: unique symbol;
/**
 * A schema that also carries, for TypeScript only, the type of the JSON it describes: the apps
 * type their answers with `Shape<typeof SCHEMA>`, so an answer and its description are one
 * declaration.
 */
export type Schema<T> = JsonObject & { readonly [SHAPE]?: T };

/** What a schema literal describes; a Schema says it itself. */
type Described<S> = S extends { const: infer C }
  ? C
  : S extends { enum: readonly (infer E)[] }
    ? E
    : S extends { type: 'string' }
      ? string
      : S extends { type: 'integer' | 'number' }
        ? number
        : S extends { type: 'boolean' }
          ? boolean
          : S extends { type: readonly ['string', 'null'] }
            ? string | null
            : S extends { type: 'array'; items: infer I }
              ? readonly Shape<I>[]
              : unknown;
export type Shape<S> = S extends { readonly [SHAPE]?: infer T }
  ? unknown extends T
    ? Described<S>
    : T
  : Described<S>;

/** A `$ref` to a schema component, typed as the component it names. */
export const schemaRefTo = <S>(name: string, _component: S): Schema<Shape<S>> => schemaRef(name);

/** An object with no other members; every property is required unless `required` says otherwise. */
export function closedObject<
  const P extends Readonly<Record<string, unknown>>,
  const R extends keyof P & string = keyof P & string,
>(
  properties: P,
  description?: string,
  required: readonly R[] = Object.keys(properties) as R[],
): Schema<{ readonly [K in R]: Shape<P[K]> } & { readonly [K in Exclude<keyof P, R>]?: Shape<P[K]> }> {
  return {
    type: 'object',
    ...(description ? { description } : {}),
    ...(required.length > 0 ? { required: [...required] } : {}),
    additionalProperties: false,
    properties: properties as unknown as JsonObject,
  };
}

/** ISO 8601 UTC with `Z` (docs/rules.md, Crew records). */
const TIMESTAMP_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,6})?Z$';

export function timestamp(description: string, nullable?: false): Schema<string>;
export function timestamp(description: string, nullable?: boolean): Schema<string | null>;
export function timestamp(description: string, nullable = false): Schema<string | null> {
  return {
    type: nullable ? ['string', 'null'] : 'string',
    format: 'date-time',
    pattern: TIMESTAMP_PATTERN,
    description,
  };
}

export function prefixedId(prefix: string, description: string): Schema<string> {
  return { type: 'string', pattern: `^${prefix}_[A-Za-z0-9_-]+$`, description };
}

/** A string that is one of `values`. */
export const oneOf = <const E extends string>(values: readonly E[], description?: string): Schema<E> => ({
  type: 'string',
  enum: [...values],
  ...(description ? { description } : {}),
});

export const count = (description: string): Schema<number> => ({ type: 'integer', minimum: 0, description });

export function parameter(
  name: string,
  location: 'query' | 'header' | 'path',
  description: string,
  schema: JsonObject,
  required = false,
): JsonObject {
  return { name, in: location, required, description, schema };
}

/** A resource id in the path (`/…/{name}`): what no id can be is simply not found. */
export const pathId = (name: string, description: string): JsonObject =>
  parameter(name, 'path', description, { type: 'string', minLength: 1, maxLength: 100 }, true);

/** The component name of a code's Problem schema: `invalid_token` → `ProblemInvalidToken`. */
export function problemSchemaName(code: ProblemCode): string {
  return `Problem${code
    .split('_')
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('')}`;
}

/**
 * One Problem Details schema (RFC 7807) per code: `type` ends in `/errors/<code>`, `status` and
 * `title` are fixed. Only `invalid_request` has `errors`; no other member appears.
 */
export function problemSchema(code: ProblemCode, docsUrl: string): JsonObject {
  const problem = PROBLEMS[code];
  const properties: JsonObject = {
    type: {
      type: 'string',
      format: 'uri',
      pattern: `/errors/${code}$`,
      description: `Always \`{DOCS_URL}/errors/${code}\`; here \`${docsUrl}/errors/${code}\`.`,
    },
    title: { type: 'string', const: problem.title },
    status: { type: 'integer', const: problem.status },
    detail: { type: 'string', description: 'What went wrong with this request, for a developer.' },
    instance: {
      type: 'string',
      pattern: REQUEST_ID_PATTERN.source,
      description: 'The request id: the same value as the `X-Request-Id` response header.',
    },
  };
  if (code === 'invalid_request') {
    properties.errors = {
      type: 'array',
      minItems: 1,
      description: 'One entry per field that failed validation.',
      items: schemaRef('FieldError'),
    };
  }
  return {
    type: 'object',
    title: `Problem: ${code}`,
    description: `${PROBLEM_GUIDE[code].meaning} See ${docsUrl}/errors/${code}.`,
    required: Object.keys(properties),
    additionalProperties: false,
    properties,
  };
}

export function problemExample(code: ProblemCode, docsUrl: string, detail: string): JsonObject {
  const problem = PROBLEMS[code];
  return {
    type: `${docsUrl}/errors/${code}`,
    title: problem.title,
    status: problem.status,
    detail,
    instance: 'req_5f2c9a7e4b1d4c08a3e6f1b2c3d4e5f6',
    ...(code === 'invalid_request'
      ? { errors: [{ field: 'limit', message: `must be an integer from 1 to ${API_LIMITS.pageLimitMax}` }] }
      : {}),
  };
}

/**
 * Headers of an answer: header name → header component. A $ref cannot carry `required`, so a
 * header not on every answer of its status points at the component's `…Optional` twin.
 */
export type HeaderSet = Readonly<Record<string, string>>;

/** Every answer carries `X-Request-Id`, before its own headers. */
export function headerObjects(headers: HeaderSet = {}): JsonObject {
  const out: JsonObject = { 'X-Request-Id': ref('headers', 'XRequestId') };
  for (const [name, component] of Object.entries(headers)) out[name] = ref('headers', component);
  return out;
}

export interface ProblemAnswer {
  readonly codes: readonly ProblemCode[];
  readonly description: string;
  readonly headers?: HeaderSet;
  readonly detail?: string;
}

/** A response whose body is one of these codes' Problems, with an example of the first. */
export function problemResponse(answer: ProblemAnswer, docsUrl: string): JsonObject {
  const [first] = answer.codes;
  const schemas = answer.codes.map((code) => schemaRef(problemSchemaName(code)));
  const examples: JsonObject = {};
  for (const code of answer.codes) {
    examples[code] = {
      summary: PROBLEMS[code].title,
      value: problemExample(
        code,
        docsUrl,
        answer.detail && code === first ? answer.detail : PROBLEM_GUIDE[code].meaning,
      ),
    };
  }
  return {
    description: answer.description,
    headers: headerObjects(answer.headers),
    content: {
      'application/problem+json': {
        schema: schemas.length === 1 ? schemas[0] : { oneOf: schemas },
        examples,
      },
    },
  };
}

/** RFC 6749 §5.2 error answer of the OAuth endpoints, limited to the codes it can carry. */
export function oauthErrorResponse(
  description: string,
  codes: readonly string[],
  headers: HeaderSet = {},
): JsonObject {
  const [first] = codes;
  return {
    description,
    headers: headerObjects({ 'Cache-Control': 'CacheControlNoStore', ...headers }),
    content: {
      'application/json': {
        schema: {
          allOf: [schemaRef('OAuthError')],
          properties: { error: { enum: [...codes] } },
        },
        example: { error: first, error_description: 'A human-readable explanation of the error.' },
      },
    },
  };
}

/** An HTML page of the consent UI (what a crew member's browser shows). */
export function htmlResponse(description: string): JsonObject {
  return {
    description,
    headers: headerObjects(),
    content: { 'text/html': { schema: { type: 'string' } } },
  };
}
