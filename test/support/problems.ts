import type { FieldError, ProblemBody } from '@svc/contracts';
import type { HttpResponse } from './http';

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
