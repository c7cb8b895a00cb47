import { ApiProblem } from '@svc/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { oauthErrorRenderer, oauthProblem } from './oauth-error.renderer';
import { OAuthException } from './oauth.exception';

function render(error: unknown, problem: ApiProblem, url = '/oauth/token', authorization?: string) {
  const headers: Record<string, string> = {};
  const answer = { status: 0, headers, body: '' };
  const reply = {
    status: (code: number) => ((answer.status = code), reply),
    header: (name: string, value: string) => ((headers[name] = value), reply),
    send: (body: string) => ((answer.body = body), reply),
  };
  const request = { url, id: 'req_1', headers: authorization ? { authorization } : {} };
  const handled = oauthErrorRenderer(
    error,
    problem,
    request as unknown as FastifyRequest,
    reply as unknown as FastifyReply,
  );
  return { handled, ...answer, json: answer.body ? (JSON.parse(answer.body) as unknown) : undefined };
}

function renderOAuth(error: OAuthException, authorization?: string) {
  return render(error, oauthProblem(error)!, '/oauth/token', authorization);
}

describe('RFC 6749 error renderer', () => {
  it('leaves paths outside /oauth/ and /.well-known/ to Problem Details', () => {
    expect(render(new Error('x'), new ApiProblem('not_found', 'No.'), '/v1/me').handled).toBe(false);
  });

  it.each([
    ['invalid_request', 400],
    ['invalid_grant', 400],
    ['invalid_scope', 400],
    ['unsupported_grant_type', 400],
    ['invalid_client', 401],
  ] as const)('answers %s with %i, no-store and the RFC 6749 body (§5.2)', (code, status) => {
    const answer = renderOAuth(new OAuthException(code, 'Why.'));
    expect(answer).toMatchObject({ handled: true, status, json: { error: code, error_description: 'Why.' } });
    expect(answer.headers).toMatchObject({
      'cache-control': 'no-store',
      pragma: 'no-cache',
      'x-request-id': 'req_1',
      'content-type': 'application/json; charset=utf-8',
    });
  });

  it('challenges with Basic on invalid_client only when the client used Basic (§5.2)', () => {
    const failed = new OAuthException('invalid_client', 'Client authentication failed.');
    expect(renderOAuth(failed, 'Basic YTpi').headers['www-authenticate']).toBe('Basic realm="oauth"');
    expect(renderOAuth(failed, 'Basic').headers['www-authenticate']).toBe('Basic realm="oauth"');
    expect(renderOAuth(failed).headers['www-authenticate']).toBeUndefined();
    expect(renderOAuth(failed, 'Bearer at_x').headers['www-authenticate']).toBeUndefined();
    const invalid = new OAuthException('invalid_request', 'Use one method.');
    expect(renderOAuth(invalid, 'Basic YTpi').headers['www-authenticate']).toBeUndefined();
  });

  it.each([
    [
      429,
      'temporarily_unavailable',
      new ApiProblem('rate_limit_exceeded', 'Slow down.', { headers: { 'retry-after': '9' } }),
    ],
    [503, 'temporarily_unavailable', new ApiProblem('service_unavailable', 'Down.')],
    [504, 'temporarily_unavailable', new ApiProblem('gateway_timeout', 'Slow.')],
    [500, 'server_error', new ApiProblem('internal_error', 'Oops.')],
    [401, 'invalid_token', new ApiProblem('invalid_token', 'Who?')],
    [403, 'insufficient_scope', new ApiProblem('insufficient_scope', 'No.')],
    [405, 'invalid_request', new ApiProblem('method_not_allowed', 'GET?', { headers: { allow: 'POST' } })],
    [413, 'invalid_request', new ApiProblem('payload_too_large', 'Big.')],
    [400, 'invalid_request', new ApiProblem('unsupported_media_type', 'Form only.')],
  ] as const)('answers a platform problem with %i and %s, its headers kept', (status, code, problem) => {
    const answer = render(new Error('platform'), problem);
    expect(answer).toMatchObject({ status, json: { error: code, error_description: problem.detail } });
    expect(answer.headers).toMatchObject(problem.extras.headers ?? {});
  });

  it('spells descriptions in the RFC 6749 character set', () => {
    const answer = renderOAuth(new OAuthException('invalid_request', 'See “§3.1” \\ é.'));
    expect(answer.json).toMatchObject({ error_description: "See 'section 3.1' / ." });
  });
});
