import { Body, Controller, Get, HttpCode, Module, Param, Post } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createLogger, DependencyUnavailableError, PlatformModule, ValidationProblem } from '@svc/platform';
import { Writable } from 'node:stream';
import { startHttpApp } from '../support/http-app';

/** The platform's HTTP behaviour every app shares: Problem Details (RFC 7807) and X-Request-Id. */
@Controller('things')
class ThingsController {
  @Post()
  @HttpCode(201)
  create(@Body() body: unknown) {
    return { received: body };
  }

  @Get('invalid')
  invalid() {
    throw new ValidationProblem([{ field: 'limit', message: 'must be an integer between 1 and 200' }]);
  }

  @Get('boom')
  boom() {
    throw new Error('database row had an impossible shape');
  }

  @Get('items/:id')
  item(@Param('id') id: string) {
    return { id };
  }

  @Get('dependency')
  dependency() {
    throw new DependencyUnavailableError('auth-server');
  }
}

@Module({ controllers: [ThingsController] })
class ThingsModule {}

const lines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString().split('\n').filter(Boolean))
      lines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

let app: NestFastifyApplication;
let url: string;

beforeAll(async () => {
  const logger = createLogger('problem-test', 'info', sink);
  ({ app, url } = await startHttpApp(
    'problem-test',
    (platform) => ({ module: class TestRoot {}, imports: [PlatformModule.forRoot(platform), ThingsModule] }),
    {},
    logger,
  ));
});

afterAll(async () => {
  await app.close();
});

async function problemOf(response: Response) {
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = (await response.json()) as Record<string, unknown>;
  expect(body.instance).toBe(response.headers.get('x-request-id'));
  return body;
}

describe('Problem Details (RFC 7807 §3)', () => {
  it("answers a path parameter over Fastify's length cap with a 404 problem that does not echo it", async () => {
    const id = 'x'.repeat(150);
    const response = await fetch(`${url}/things/items/${id}`);
    expect(response.status).toBe(404);
    const body = await problemOf(response);
    expect(body).toMatchObject({ title: 'Not found', status: 404 });
    expect(JSON.stringify(body)).not.toContain(id);
    // Below the cap the route answers as usual.
    const short = await fetch(`${url}/things/items/${'x'.repeat(90)}`);
    expect(short.status).toBe(200);
  });

  it('answers a malformed URL escape with a 400 bad_request problem', async () => {
    const response = await fetch(`${url}/things/items/%zz`);
    expect(response.status).toBe(400);
    const body = await problemOf(response);
    expect(body).toMatchObject({ title: 'Bad request', status: 400 });
  });

  it('answers an unknown path with a 404 not_found problem', async () => {
    const response = await fetch(`${url}/nowhere`);
    expect(response.status).toBe(404);
    const body = await problemOf(response);
    expect(body).toMatchObject({
      type: 'https://docs.test/docs/errors/not_found',
      title: 'Not found',
      status: 404,
    });
    expect(typeof body.detail).toBe('string');
  });

  it('answers a wrong method with 405 and Allow (RFC 9110 §15.5.6)', async () => {
    const response = await fetch(`${url}/things/invalid`, { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
    expect((await problemOf(response)).type).toBe('https://docs.test/docs/errors/method_not_allowed');
  });

  it('answers an unsupported Content-Type with 415', async () => {
    const response = await fetch(`${url}/things`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    expect(response.status).toBe(415);
    expect((await problemOf(response)).type).toBe('https://docs.test/docs/errors/unsupported_media_type');
  });

  it('accepts JSON on the same route', async () => {
    const response = await fetch(`${url}/things`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ a: 1 }),
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ received: { a: 1 } });
  });

  it('answers a body over 1 MiB with 413', async () => {
    const response = await fetch(`${url}/things`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ blob: 'a'.repeat(1024 * 1024 + 10) }),
    });
    expect(response.status).toBe(413);
    expect((await problemOf(response)).type).toBe('https://docs.test/docs/errors/payload_too_large');
  });

  it('answers validation failures with 422 and an errors array', async () => {
    const response = await fetch(`${url}/things/invalid`);
    expect(response.status).toBe(422);
    const body = await problemOf(response);
    expect(body.type).toBe('https://docs.test/docs/errors/invalid_request');
    expect(body.errors).toEqual([{ field: 'limit', message: 'must be an integer between 1 and 200' }]);
  });

  it('answers an unavailable dependency with 503 service_unavailable', async () => {
    const response = await fetch(`${url}/things/dependency`);
    expect(response.status).toBe(503);
    expect((await problemOf(response)).type).toBe('https://docs.test/docs/errors/service_unavailable');
  });

  it('answers an unexpected error with a 500 that hides the cause and logs it once with the request id', async () => {
    const response = await fetch(`${url}/things/boom`, { headers: { 'x-request-id': 'trace-500-check' } });
    expect(response.status).toBe(500);
    const body = await problemOf(response);
    expect(body.instance).toBe('trace-500-check');
    expect(JSON.stringify(body)).not.toContain('impossible shape');
    const logged = lines.filter((l) => l.level === 'error' && JSON.stringify(l).includes('impossible shape'));
    expect(logged).toHaveLength(1);
    expect(logged[0].request_id).toBe('trace-500-check');
  });
});

describe('X-Request-Id', () => {
  it('keeps a valid incoming id on success and on error', async () => {
    const ok = await fetch(`${url}/healthz`, { headers: { 'x-request-id': 'partner.trace-42:a_b' } });
    expect(ok.headers.get('x-request-id')).toBe('partner.trace-42:a_b');
    const notFound = await fetch(`${url}/missing`, { headers: { 'x-request-id': 'partner.trace-43' } });
    expect((await problemOf(notFound)).instance).toBe('partner.trace-43');
  });

  it.each([['has a space'], ['x'.repeat(129)], ['quote"inside']])(
    'replaces an invalid incoming id %#',
    async (bad) => {
      const response = await fetch(`${url}/missing`, { headers: { 'x-request-id': bad } });
      const id = response.headers.get('x-request-id');
      expect(id).not.toBe(bad);
      expect(id).toMatch(/^req_[A-Za-z0-9_-]+$/);
      expect((await problemOf(response)).instance).toBe(id);
    },
  );

  it('gives each request its own fresh id and logs it on the request line', async () => {
    const a = (await fetch(`${url}/healthz`)).headers.get('x-request-id');
    const b = (await fetch(`${url}/healthz`)).headers.get('x-request-id');
    expect(a).not.toBe(b);
    const line = lines.find((l) => l.msg === 'request completed' && l.request_id === b);
    expect(line).toMatchObject({ method: 'GET', path: '/healthz', status: 200 });
  });
});
