import { startTestApp, type TestApp } from '../../../../test/support/fake-consent-ui';
import { PAGE_HEADERS } from './web-result';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('error pages', () => {
  it('answers an unknown /account path with a 404 HTML page that quotes the request id', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/account/nowhere',
      headers: { 'x-request-id': 'support-ref-42' },
    });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers).toMatchObject(PAGE_HEADERS);
    expect(response.headers['x-request-id']).toBe('support-ref-42');
    expect(response.body).toContain('<h1>Page not found</h1>');
    expect(response.body).toContain('<code>support-ref-42</code>');
  });

  it('answers a wrong method with 405 and Allow, as HTML', async () => {
    const response = await t.app.inject({ method: 'DELETE', url: '/login' });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD, POST');
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it('answers a form in the wrong encoding with 415, as HTML', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/login',
      payload: 'email=a',
      headers: { 'content-type': 'text/plain' },
    });
    expect(response.statusCode).toBe(415);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it('leaves the probes to the platform', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
  });
});

describe('stylesheet', () => {
  it('is served by the app as text/css, cacheable, with a validator', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/account/assets/consent.css' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.body).toContain('.card');
    const etag = response.headers.etag as string;
    const again = await t.app.inject({
      method: 'GET',
      url: '/account/assets/consent.css',
      headers: { 'if-none-match': etag },
    });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });
});
