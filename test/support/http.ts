import http from 'node:http';
import { assertContract } from './contract';
import { formBody } from './factories';
import type { FieldError, ProblemBody } from '@svc/contracts';

/** A response as the e2e tests look at it. Header names are lower-case. */
export interface HttpResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  /** Milliseconds from sending to the end of the response. */
  readonly elapsedMs: number;
  json<T = Record<string, unknown>>(): T;
  header(name: string): string | undefined;
}

export interface RequestOptions {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  /** A JSON body (a string is sent as it is). */
  readonly json?: unknown;
  /** An `application/x-www-form-urlencoded` body; a list of pairs keeps repeated names. */
  readonly form?: Record<string, string> | readonly (readonly [string, string])[];
  /** `Authorization: Bearer <token>`; undefined: none. */
  readonly bearer?: string;
  readonly timeoutMs?: number;
}

/**
 * One HTTP request with node:http rather than fetch: a server may answer before it has read
 * the whole body (a 413 for an oversized upload) and close the connection; the answer is
 * what counts, not the error of the unfinished upload.
 */
export function request(url: string, options: RequestOptions = {}): Promise<HttpResponse> {
  const { method = 'GET', json, form, bearer, timeoutMs = 20_000 } = options;
  const body =
    json !== undefined
      ? typeof json === 'string'
        ? json
        : JSON.stringify(json)
      : form
        ? formBody(form)
        : options.body;
  const headers = {
    ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
    ...(json === undefined ? {} : { 'content-type': 'application/json' }),
    ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
    ...options.headers,
  };
  const started = Date.now();
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request(
      url,
      {
        method,
        headers:
          body === undefined ? headers : { 'content-length': String(Buffer.byteLength(body)), ...headers },
        timeout: timeoutMs,
        agent: false,
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          // Every answer a test receives must match the OpenAPI description (test/support/contract.ts).
          try {
            assertContract(method, url, { status: res.statusCode ?? 0, headers: res.headers, text });
          } catch (violation) {
            reject(violation as Error);
            return;
          }
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            elapsedMs: Date.now() - started,
            json: <T>() => JSON.parse(text) as T,
            header: (name: string) => {
              const v = res.headers[name.toLowerCase()];
              return Array.isArray(v) ? v.join(', ') : v;
            },
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms: ${method} ${url}`)));
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    if (body === undefined) req.end();
    else req.end(body);
  });
}

/**
 * An RFC 7807 answer: status, `application/problem+json`, `type` ending in the code (with `docsUrl`,
 * exactly `<docsUrl>/errors/<code>`), and the request id as `instance`.
 */
export function expectProblem(
  res: HttpResponse,
  status: number,
  code: string,
  docsUrl?: string,
): ProblemBody {
  const summary = `${res.status} ${res.text.slice(0, 400)}`;
  expect({ status: res.status, summary }).toEqual({ status, summary });
  expect(res.header('content-type')).toMatch(/^application\/problem\+json/);
  const body = res.json<ProblemBody>();
  if (docsUrl === undefined) expect(body.type).toMatch(new RegExp(`/errors/${code}$`));
  else expect(body.type).toBe(`${docsUrl}/errors/${code}`);
  expect(body.status).toBe(status);
  expect(body.instance).toBe(res.header('x-request-id'));
  return body;
}

/** A 422 `invalid_request` whose `errors` name exactly these fields. */
export function expectInvalidFields(res: HttpResponse, fields: readonly string[]): readonly FieldError[] {
  const body = expectProblem(res, 422, 'invalid_request');
  expect(Array.isArray(body.errors)).toBe(true);
  const errors = body.errors ?? [];
  expect([...new Set(errors.map((e) => e.field))].sort()).toEqual([...fields].sort());
  for (const e of errors) expect(typeof e.message).toBe('string');
  return errors;
}
