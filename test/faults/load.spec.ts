import type { HttpResponse } from '../support/http';
import { classify, recoveredAt, RECOVERY_KINDS, type Sample } from './load';

function response(status: number, contentType: string, body: unknown): HttpResponse {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return {
    status,
    headers: { 'content-type': contentType },
    text,
    elapsedMs: 1,
    json: <T>() => JSON.parse(text) as T,
    header: (name: string) => (name.toLowerCase() === 'content-type' ? contentType : undefined),
  };
}

describe('the fault matrix classifies each answer', () => {
  it('the answer a request wants is ok', () => {
    expect(classify('me', '/v1/me', response(200, 'application/json', {}))).toEqual({ outcome: 'ok' });
    expect(classify('revoked_probe', '/v1/me', response(401, 'application/problem+json', {}))).toEqual({
      outcome: 'ok',
    });
  });

  it('a service_unavailable Problem on /v1 and a temporarily_unavailable error on /oauth are 503s it accepts', () => {
    const problem = { type: 'http://x/docs/errors/service_unavailable', status: 503 };
    expect(classify('me', '/v1/me', response(503, 'application/problem+json', problem)).outcome).toBe(
      'unavailable',
    );
    expect(
      classify(
        'revoke',
        '/oauth/revoke',
        response(503, 'application/json; charset=utf-8', { error: 'temporarily_unavailable' }),
      ).outcome,
    ).toBe('unavailable');
  });

  it('a 500, a 502, a 401 for a live token or a 503 of another shape is a failure', () => {
    for (const res of [
      response(500, 'application/problem+json', { type: 'x/internal_error' }),
      response(502, 'application/problem+json', { type: 'x/bad_gateway' }),
      response(401, 'application/problem+json', { type: 'x/invalid_token' }),
      response(503, 'text/html', '<h1>503</h1>'),
      response(503, 'application/problem+json', { type: 'x/internal_error' }),
    ]) {
      expect(classify('me', '/v1/me', res).outcome).toBe('failure');
    }
    expect(
      classify(
        'revoke',
        '/oauth/revoke',
        response(503, 'application/problem+json', { type: 'x/service_unavailable' }),
      ).outcome,
    ).toBe('failure');
  });
});

describe('a provision crew-api could not grant', () => {
  const failed = response(502, 'application/problem+json', { type: 'x/errors/entitlement_write_failed' });

  it('is the interface’s retryable 502 entitlement_write_failed, accepted like a 503', () => {
    expect(classify('sponsorship_provision', '/v1/partners/sponsorships', failed).outcome).toBe(
      'unavailable',
    );
  });

  it('is a failure anywhere else, and so is the gateway’s own 502 on a provision', () => {
    expect(classify('sponsorship_list', '/v1/partners/sponsorships', failed).outcome).toBe('failure');
    const gateway = response(502, 'application/problem+json', { type: 'x/errors/bad_gateway' });
    expect(classify('sponsorship_provision', '/v1/partners/sponsorships', gateway).outcome).toBe('failure');
  });
});

describe('recovery time', () => {
  const sample = (kind: Sample['kind'], startedAt: number, outcome: Sample['outcome']): Sample => ({
    kind,
    startedAt,
    endedAt: startedAt + 10,
    ms: 10,
    status: outcome === 'ok' ? 200 : 503,
    outcome,
    worker: 0,
  });

  it('is the first moment every kind has succeeded after the last 503 since the return', () => {
    const samples = [
      sample('me', 1000, 'unavailable'),
      ...RECOVERY_KINDS.map((k, i) => sample(k, 1100 + i, 'ok')),
      sample('vessels', 1500, 'unavailable'),
      ...RECOVERY_KINDS.map((k, i) => sample(k, 2000 + i * 10, 'ok')),
    ];
    expect(recoveredAt(samples, 900)).toBe(2000 + (RECOVERY_KINDS.length - 1) * 10 + 10);
  });

  it('is unknown while some kind has not succeeded since', () => {
    const samples = RECOVERY_KINDS.filter((k) => k !== 'record_change').map((k, i) =>
      sample(k, 1000 + i, 'ok'),
    );
    expect(recoveredAt(samples, 900)).toBeUndefined();
  });
});
