import { PROBLEM_CONTENT_TYPE, REQUEST_ID_PATTERN, type ProblemBody } from '@svc/contracts';
import { request, type HttpResponse } from '../support/http';
import { eventually } from '../support/services';
import { startSystem, type RunningSystem } from '../support/system';

/**
 * The whole system as a partner meets it: every app and nginx as processes, reached only
 * through the gateway.
 */
describe('gateway (every app and nginx running)', () => {
  let system: RunningSystem;
  const url = (path: string) => `${system.baseUrl}${path}`;

  beforeAll(async () => {
    system = await startSystem({ label: 'gateway' });
  }, 180_000);

  afterAll(async () => {
    await system?.stop();
  }, 60_000);

  /** A Problem Details answer whose `instance` is the response's request id. */
  function expectProblem(
    res: HttpResponse,
    statuses: readonly number[],
    codes: readonly string[],
  ): ProblemBody {
    expect(statuses).toContain(res.status);
    expect(res.header('content-type')).toMatch(new RegExp(`^${PROBLEM_CONTENT_TYPE.replace('+', '\\+')}`));
    const body = res.json<ProblemBody>();
    expect(body.status).toBe(res.status);
    expect(codes.map((c) => `${system.docsUrl}/errors/${c}`)).toContain(body.type);
    expect(typeof body.title).toBe('string');
    expect(body.instance).toBe(res.header('x-request-id'));
    return body;
  }

  it('answers /healthz itself, with a request id', async () => {
    const res = await request(url('/healthz'));
    expect(res.status).toBe(200);
    expect(res.header('x-request-id')).toMatch(REQUEST_ID_PATTERN);
  });

  describe('X-Request-Id', () => {
    it('keeps a valid incoming id', async () => {
      const id = 'e2e-Req.id:0042_x';
      const res = await request(url('/healthz'), { headers: { 'x-request-id': id } });
      expect(res.header('x-request-id')).toBe(id);
    });

    it('keeps a valid id of 128 characters', async () => {
      const id = 'a'.repeat(128);
      const res = await request(url('/healthz'), { headers: { 'x-request-id': id } });
      expect(res.header('x-request-id')).toBe(id);
    });

    it.each([
      ['with a space', 'not valid'],
      ['with a slash', 'a/b'],
      ['of 129 characters', 'a'.repeat(129)],
      ['with a non-ASCII letter', 'caf\u00e9'],
    ])('replaces an id %s by a fresh valid one', async (_what, id) => {
      const res = await request(url('/healthz'), { headers: { 'x-request-id': id } });
      const returned = res.header('x-request-id');
      expect(returned).toMatch(REQUEST_ID_PATTERN);
      expect(returned).not.toBe(id);
    });

    it('gives a fresh id per request when none is sent', async () => {
      const a = (await request(url('/healthz'))).header('x-request-id');
      const b = (await request(url('/healthz'))).header('x-request-id');
      expect(a).toMatch(REQUEST_ID_PATTERN);
      expect(b).toMatch(REQUEST_ID_PATTERN);
      expect(a).not.toBe(b);
    });

    it('passes the id to the app, which answers with the same one', async () => {
      const id = 'e2e-through-upstream-1';
      const res = await request(url('/v1/me/e2e-no-such-route'), { headers: { 'x-request-id': id } });
      expect(res.header('x-request-id')).toBe(id);
      expectProblem(res, [404], ['not_found']);
    });

    it('replaces an invalid id before it reaches the app', async () => {
      const res = await request(url('/v1/me/e2e-no-such-route'), { headers: { 'x-request-id': 'bad id!' } });
      const returned = res.header('x-request-id');
      expect(returned).toMatch(REQUEST_ID_PATTERN);
      expectProblem(res, [404], ['not_found']);
    });
  });

  it('answers an unknown path with a 404 Problem', async () => {
    const res = await request(url('/e2e/no/such/path'));
    expectProblem(res, [404], ['not_found']);
  });

  it('answers an unknown path with a 404 Problem for other methods too', async () => {
    const res = await request(url('/e2e/no/such/path'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expectProblem(res, [404], ['not_found']);
  });

  it('answers a 413 Problem for a body over the limit on a normal route', async () => {
    const body = JSON.stringify({ padding: 'x'.repeat(2 * 1024 * 1024) });
    const res = await request(url('/v1/partners/sponsorships'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'e2e-too-large' },
      body,
    });
    expect(res.header('x-request-id')).toBe('e2e-too-large');
    expectProblem(res, [413], ['payload_too_large']);
  });

  it.each([
    ['/openapi.json', /^application\/json/],
    ['/openapi.yaml', /^application\/yaml/],
    ['/docs/', /^text\/html/],
  ])('serves %s from its own files', async (path, type) => {
    const res = await request(url(path));
    expect(res.status).toBe(200);
    expect(res.header('content-type')).toMatch(type);
  });

  // Above client_body_buffer_size nginx writes the body to a temporary file before proxying it.
  const bufferedBody = JSON.stringify({ active_refs: ['x'.repeat(2 * 1024 * 1024)] });

  it('passes a body it buffers on disk to the app, whose own answer comes back', async () => {
    const res = await request(url('/v1/partners/sponsorships/reconcile'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: bufferedBody,
    });
    // sponsorship-api's own Problem: the body reached it, and it wants credentials first.
    expectProblem(res, [401], ['invalid_token']);
  });

  it('answers a 413 Problem for a body over a route of its own limit (5 MiB on reconcile)', async () => {
    const res = await request(url('/v1/partners/sponsorships/reconcile'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ active_refs: ['x'.repeat(6 * 1024 * 1024)] }),
    });
    expectProblem(res, [413], ['payload_too_large']);
  });

  describe('while sponsorship-api is down', () => {
    afterAll(async () => {
      await system?.startApp('sponsorship-api');
    }, 90_000);

    it('answers a buffered body with a 502 or 504 Problem, never its HTML 413 page', async () => {
      await system.stopApp('sponsorship-api');
      const res = await request(url('/v1/partners/sponsorships/reconcile'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: bufferedBody,
        timeoutMs: 30_000,
      });
      expectProblem(res, [502, 504], ['bad_gateway', 'gateway_timeout']);
    });
  });

  describe('while crew-api is down', () => {
    afterAll(async () => {
      await system?.startApp('crew-api');
    }, 90_000);

    it('answers /v1/me with a 502 or 504 Problem, quickly', async () => {
      await system.stopApp('crew-api');
      const res = await request(url('/v1/me'), { timeoutMs: 30_000 });
      expectProblem(res, [502, 504], ['bad_gateway', 'gateway_timeout']);
      expect(res.elapsedMs).toBeLessThan(20_000);
      // The other apps are still reached.
      const other = await request(url('/v1/partners/e2e-no-such-route'));
      expect([502, 503, 504]).not.toContain(other.status);
    });

    it('reaches crew-api again once it is back', async () => {
      await system.startApp('crew-api');
      // A path crew-api does not serve gives crew-api's own 404 Problem, not the gateway's 502.
      const res = await eventually(async () => {
        const r = await request(url('/v1/me/e2e-no-such-route'), {
          headers: { 'x-request-id': 'e2e-back-again' },
        });
        return [502, 503, 504].includes(r.status) ? undefined : r;
      });
      expect(res.header('x-request-id')).toBe('e2e-back-again');
      expectProblem(res, [404], ['not_found']);
    }, 90_000);
  });
});
