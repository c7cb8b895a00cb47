import { buildOpenApiDocument, PROBLEMS, type JsonObject } from '@svc/contracts';
import { appendFileSync } from 'node:fs';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * The one contract check of the test suites: every response the shared HTTP helpers receive from
 * the service is validated against the OpenAPI description (`@svc/contracts`), so an answer that
 * drifts from the document fails the test that received it, whatever that test asserts itself.
 *
 * What is checked for a response to a documented path:
 * - the method is documented there, or the answer is a 404/405 for an undocumented method;
 * - the status is documented for the operation;
 * - every header the document marks required is present, and every documented header that is
 *   present matches its schema (integers as decimal text);
 * - the `Content-Type` is one the document lists for that status (none means an empty body);
 * - a JSON body matches its schema (`additionalProperties: false` wherever the interface lists
 *   every field); a Problem's `instance` equals its `X-Request-Id`.
 * Paths the document does not describe (probes, the internal records API, test servers) pass
 * unchecked; the route-drift test makes sure no public route is missing from the document.
 */

export interface ContractResponse {
  readonly status: number;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
}

type Operation = JsonObject & { responses: Record<string, JsonObject> };

const DOCUMENT_ID = 'https://contract.test/openapi.json';
// Problem types are checked by their `/errors/<code>` suffix, so any DOCS_URL a harness uses fits.
export const DOCUMENT = buildOpenApiDocument({
  publicBaseUrl: 'http://localhost:8080',
  docsUrl: 'http://localhost:8080/docs',
});
const paths = DOCUMENT.paths as Record<string, Record<string, Operation>>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

let ajv: Ajv2020 | undefined;
const validators = new Map<string, ValidateFunction>();

function compile(schema: JsonObject, key: string): ValidateFunction {
  if (!ajv) {
    // strict off: OpenAPI keywords (`example`, `discriminator`) sit beside JSON Schema's.
    ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(ajv);
    ajv.addSchema({ ...DOCUMENT, $id: DOCUMENT_ID } as object);
  }
  let validate = validators.get(key);
  if (!validate) {
    // Local $refs (#/components/...) resolve against the whole document.
    validate = ajv.compile({ $id: `${DOCUMENT_ID}/${validators.size}`, ...rebase(schema) });
    validators.set(key, validate);
  }
  return validate;
}

/** `#/components/x` inside an inline schema means the document's components. */
function rebase(value: unknown): JsonObject {
  return JSON.parse(
    JSON.stringify(value).replace(/"#\/components\//g, `"${DOCUMENT_ID}#/components/`),
  ) as JsonObject;
}

/** The node a `$ref` of the description points at (followed to the end), or `value` itself. */
export function resolve<T = JsonObject>(value: JsonObject): T {
  const target = value.$ref;
  if (typeof target !== 'string') return value as T;
  let node: unknown = DOCUMENT;
  for (const part of target.replace(/^#\//, '').split('/')) node = (node as JsonObject)[part];
  return resolve(node as JsonObject) as T;
}

const templates = Object.keys(paths).map((template) => ({
  template,
  params: (template.match(/\{/g) ?? []).length,
  pattern: new RegExp(
    `^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`,
  ),
}));

/** The documented path template of a concrete path, preferring literal paths to templated ones. */
function findOperation(
  method: string,
  path: string,
): { template: string; operation?: Operation } | undefined {
  const matches = templates.filter((t) => t.pattern.test(path)).sort((a, b) => a.params - b.params);
  if (matches.length === 0) return undefined;
  const lower = method.toLowerCase();
  // HEAD is GET without a body (RFC 9110 §9.3.2).
  const wanted = lower === 'head' ? 'get' : lower;
  for (const match of matches) {
    const operation = paths[match.template][wanted];
    if (operation && METHODS.includes(wanted)) return { template: match.template, operation };
  }
  return { template: matches[0].template };
}

const headerValue = (res: Pick<ContractResponse, 'headers'>, name: string): string | undefined => {
  const value = res.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
};

/** The JSON of a body, or undefined (and a problem noted) when it is not JSON. */
function parseBody(text: string, problems: string[]): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    problems.push('the body is not JSON');
    return undefined;
  }
}

/** Notes where `body` departs from `schema` (compiled once under `key`). */
function checkBody(schema: JsonObject, key: string, body: unknown, problems: string[]): void {
  const validate = compile(schema, key);
  if (!validate(body)) problems.push(`body: ${ajv!.errorsText(validate.errors, { dataVar: 'body' })}`);
}

function checkHeader(name: string, value: string, schema: JsonObject, key: string): string | undefined {
  const parsed = schema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
  const validate = compile(schema, key);
  return validate(parsed)
    ? undefined
    : `header ${name}: ${JSON.stringify(value)} ${ajv!.errorsText(validate.errors)}`;
}

/** CONTRACT_TALLY_FILE=<file>: one line per checked answer, to see what the suites cover. */
function tally(line: string): void {
  const file = process.env.CONTRACT_TALLY_FILE;
  if (file) appendFileSync(file, `${line}\n`);
}

export class ContractViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContractViolation';
  }
}

/**
 * Throws a ContractViolation naming every way `res` departs from the description of
 * `method url`; returns quietly for paths the description does not cover.
 */
export function assertContract(method: string, url: string, res: ContractResponse): void {
  const path = new URL(url, 'http://x').pathname;
  const found = findOperation(method, path);
  if (!found) return;
  const where = `${method.toUpperCase()} ${path} → ${res.status}`;
  const problems: string[] = [];

  if (!found.operation) {
    // An undocumented method on a documented path can only be refused (400: the gateway would
    // not pass the request on at all, e.g. an encoded slash that only looked like this path).
    if (res.status !== 405 && res.status !== 404 && res.status !== 400)
      problems.push(`${method.toUpperCase()} is not documented on ${found.template}`);
    if (!headerValue(res, 'x-request-id')) problems.push('header X-Request-Id is missing');
    // HEAD is answered without a body (RFC 9110 §9.3.2): only its headers can be checked.
    if (method.toUpperCase() !== 'HEAD') checkUndocumentedError(res, problems);
    return fail(where, problems, res);
  }

  const responses = found.operation.responses;
  const documented =
    responses[String(res.status)] ?? responses[`${String(res.status)[0]}XX`] ?? responses.default;
  if (!documented) {
    problems.push(
      `status ${res.status} is not documented (documented: ${Object.keys(responses).join(', ')})`,
    );
    return fail(where, problems, res);
  }
  const response = resolve(documented);
  const key = `${found.template} ${method} ${res.status}`;
  tally(`${method.toUpperCase()} ${found.template} ${res.status}`);

  for (const [name, headerRef] of Object.entries((response.headers ?? {}) as Record<string, JsonObject>)) {
    const header = resolve(headerRef);
    const value = headerValue(res, name);
    if (value === undefined) {
      if (header.required) problems.push(`header ${name} is missing`);
      continue;
    }
    const error = checkHeader(name, value, header.schema as JsonObject, `${key} header ${name}`);
    if (error) problems.push(error);
  }

  const content = (response.content ?? {}) as Record<string, JsonObject>;
  const type = (headerValue(res, 'content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (Object.keys(content).length === 0) {
    if (method.toUpperCase() !== 'HEAD' && res.text !== '')
      problems.push(`expected no body, got ${res.text.length} bytes`);
  } else if (!content[type]) {
    problems.push(
      `Content-Type ${JSON.stringify(type)} is not documented (documented: ${Object.keys(content).join(', ')})`,
    );
  } else if (method.toUpperCase() !== 'HEAD' && /json$/.test(type)) {
    const body = parseBody(res.text, problems);
    if (body !== undefined) {
      checkBody(content[type].schema as JsonObject, `${key} ${type}`, body, problems);
      if (type === 'application/problem+json') checkInstance(res, body, problems);
    }
  }
  fail(where, problems, res);
}

function checkInstance(res: ContractResponse, body: unknown, problems: string[]): void {
  const instance = (body as { instance?: unknown } | null)?.instance;
  if (instance !== headerValue(res, 'x-request-id')) {
    problems.push(
      `instance ${JSON.stringify(instance)} differs from X-Request-Id ${headerValue(res, 'x-request-id')}`,
    );
  }
}

/** 404/405 of an undocumented method: a Problem (or an RFC 6749 error on /oauth/*), or an HTML page. */
function checkUndocumentedError(res: ContractResponse, problems: string[]): void {
  const type = (headerValue(res, 'content-type') ?? '').split(';')[0].trim();
  if (type === 'application/problem+json') {
    const anyProblem = {
      oneOf: Object.keys(PROBLEMS).map((code) => ({ $ref: `#/components/schemas/${problemName(code)}` })),
    };
    const body = parseBody(res.text, problems);
    if (body === undefined) return;
    checkBody(anyProblem, 'any problem', body, problems);
    checkInstance(res, body, problems);
  } else if (type === 'application/json') {
    checkBody({ $ref: '#/components/schemas/OAuthError' }, 'oauth error', JSON.parse(res.text), problems);
  } else if (type !== 'text/html') {
    problems.push(`unexpected Content-Type ${JSON.stringify(type)} for an error`);
  }
}

const problemName = (code: string) =>
  `Problem${code
    .split('_')
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('')}`;

function fail(where: string, problems: readonly string[], res: ContractResponse): void {
  if (problems.length === 0) return;
  throw new ContractViolation(
    `The answer departs from the OpenAPI description (libs/contracts/src/openapi): ${where}\n  - ${problems.join('\n  - ')}\n  body: ${res.text.slice(0, 600)}`,
  );
}

/** The same check for a fetch Response; reads a clone, so the caller can still read the body. */
export async function assertFetchContract(method: string, url: string, res: Response): Promise<void> {
  const text = await res.clone().text();
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => (headers[name] = value));
  assertContract(method, url, { status: res.status, headers, text });
}

/**
 * A webhook delivery as a partner receives it, against the description's `webhooks` section:
 * the signed headers and the body schema of its event type. Returns what departs (empty: none).
 */
export function webhookViolations(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  rawBody: Buffer,
): string[] {
  const problems: string[] = [];
  const body = parseBody(rawBody.toString('utf8'), problems) as { type?: unknown } | undefined;
  if (body === undefined) return problems;
  const webhooks = DOCUMENT.webhooks as Record<
    string,
    { post: Operation & { parameters: JsonObject[]; requestBody: JsonObject } }
  >;
  const type = String(body.type);
  const operation = webhooks[type]?.post;
  if (!operation) return [`event type ${JSON.stringify(type)} is not in the description`];
  const value = (name: string) => headerValue({ headers }, name);
  if (!/^application\/json(;|$)/.test(value('content-type') ?? ''))
    problems.push(`Content-Type ${value('content-type')}`);
  for (const parameter of operation.parameters) {
    const name = String(parameter.name);
    const given = value(name);
    if (given === undefined) {
      if (parameter.required) problems.push(`header ${name} is missing`);
      continue;
    }
    const error = checkHeader(name, given, parameter.schema as JsonObject, `webhook ${type} ${name}`);
    if (error) problems.push(error);
  }
  const content = (operation.requestBody.content as Record<string, JsonObject>)['application/json'];
  checkBody(content.schema as JsonObject, `webhook ${type} body`, body, problems);
  // Canonical form: keys sorted, no whitespace (docs/rules.md, Webhooks).
  const canonical = JSON.stringify(
    Object.fromEntries(Object.entries(body).sort(([a], [b]) => (a < b ? -1 : 1))),
  );
  if (rawBody.toString('utf8') !== canonical)
    problems.push('the body is not canonical JSON (sorted keys, no whitespace)');
  return problems;
}
