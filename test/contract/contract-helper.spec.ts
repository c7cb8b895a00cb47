import { assertContract, ContractViolation, webhookViolations } from '../support/contract';

/** The shared contract check itself: what passes, and that each kind of drift fails. */
const id = 'req_0123456789abcdef';
const rateLimit = {
  'x-ratelimit-limit': '600',
  'x-ratelimit-remaining': '599',
  'x-ratelimit-reset': '1767225600',
  'ratelimit-policy': '"minute";q=600;w=60',
  ratelimit: '"minute";r=599;t=42',
};
const profile = {
  user_id: 'usr_sandbox_alex_morgan',
  name: 'Alex Morgan',
  role: 'Master',
  country: 'GB',
  photo_url: null,
  record_updated_at: '2026-03-03T09:15:00.000Z',
  membership: { tier: 'free', source: 'self', since: '2025-03-03T09:15:00.000Z' },
};
const ok = (body: unknown = profile, headers: Record<string, string> = {}) => ({
  status: 200,
  headers: {
    'x-request-id': id,
    'content-type': 'application/json; charset=utf-8',
    etag: '"abc"',
    'last-modified': 'Tue, 03 Mar 2026 09:15:00 GMT',
    'cache-control': 'private, no-cache',
    ...rateLimit,
    ...headers,
  },
  text: JSON.stringify(body),
});
const violation = (fn: () => void) => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ContractViolation) return err.message;
    throw err;
  }
  return undefined;
};

describe('assertContract', () => {
  it('accepts an answer as the description has it', () => {
    expect(violation(() => assertContract('GET', 'http://h/v1/me', ok()))).toBeUndefined();
    expect(violation(() => assertContract('HEAD', 'http://h/v1/me', { ...ok(), text: '' }))).toBeUndefined();
  });

  it('refuses a field the description does not have, and a missing one', () => {
    expect(
      violation(() => assertContract('GET', 'http://h/v1/me', ok({ ...profile, email: 'a@b' }))),
    ).toMatch(/must NOT have additional properties/);
    const { country: _dropped, ...withoutCountry } = profile;
    expect(violation(() => assertContract('GET', 'http://h/v1/me', ok(withoutCountry)))).toMatch(/country/);
  });

  it('refuses an undocumented status, a missing required header and a bad header value', () => {
    expect(violation(() => assertContract('GET', 'http://h/v1/me', { ...ok(), status: 201 }))).toMatch(
      /status 201 is not documented/,
    );
    expect(
      violation(() => assertContract('GET', 'http://h/v1/me', ok(profile, { 'x-ratelimit-limit': '' }))),
    ).toMatch(/X-RateLimit-Limit/);
    const noId = ok();
    delete (noId.headers as Record<string, string>)['x-request-id'];
    expect(violation(() => assertContract('GET', 'http://h/v1/me', noId))).toMatch(/X-Request-Id is missing/);
  });

  it('checks Problems: the code of the status, and instance = X-Request-Id', () => {
    const problem = (type: string, instance = id) => ({
      status: 401,
      headers: {
        'x-request-id': id,
        'content-type': 'application/problem+json',
        'www-authenticate': 'Bearer',
      },
      text: JSON.stringify({
        type,
        title: 'Invalid or missing credentials',
        status: 401,
        detail: 'd',
        instance,
      }),
    });
    expect(
      violation(() =>
        assertContract('GET', 'http://h/v1/me', problem('https://d.test/errors/invalid_token')),
      ),
    ).toBeUndefined();
    expect(
      violation(() => assertContract('GET', 'http://h/v1/me', problem('https://d.test/errors/not_found'))),
    ).toMatch(/body\/type/);
    expect(
      violation(() =>
        assertContract('GET', 'http://h/v1/me', problem('https://d.test/errors/invalid_token', 'other')),
      ),
    ).toMatch(/instance "other" differs/);
  });

  it('prefers a literal path to a template, and allows only a refusal (400/404/405) for an undocumented method', () => {
    const seat = { status: 405, headers: { 'x-request-id': id, 'content-type': 'text/html' }, text: '<p>' };
    expect(
      violation(() => assertContract('PUT', 'http://h/v1/partners/sponsorships/reconcile', seat)),
    ).toBeUndefined();
    expect(
      violation(() =>
        assertContract('PUT', 'http://h/v1/partners/sponsorships/reconcile', { ...seat, status: 200 }),
      ),
    ).toMatch(/PUT is not documented/);
  });

  it('checks only the headers of a HEAD refused on a documented path (its error has no body)', () => {
    const head = {
      status: 405,
      headers: { 'x-request-id': id, 'content-type': 'application/json' },
      text: '',
    };
    expect(violation(() => assertContract('HEAD', 'http://h/oauth/token', head))).toBeUndefined();
    expect(violation(() => assertContract('HEAD', 'http://h/oauth/token', { ...head, headers: {} }))).toMatch(
      /X-Request-Id is missing/,
    );
  });

  it('leaves paths the description does not cover alone', () => {
    expect(
      violation(() => assertContract('GET', 'http://h/readyz', { status: 500, headers: {}, text: 'x' })),
    ).toBeUndefined();
  });
});

describe('webhookViolations', () => {
  const body = Buffer.from(
    '{"created_at":"2026-03-03T09:15:00.000Z","id":"evt_abc","type":"webhook.test","user_id":"usr_sandbox_alex_morgan"}',
  );
  const headers = {
    'content-type': 'application/json',
    'x-svc-event-id': 'evt_abc',
    'x-svc-event-type': 'webhook.test',
    'x-svc-delivery-id': 'dlv_abc',
    'x-svc-timestamp': '1772529300',
    'x-svc-signature': `t=1772529300,v1=${'a'.repeat(64)}`,
    'webhook-id': 'evt_abc',
    'webhook-timestamp': '1772529300',
    'webhook-signature': `v1,${'A'.repeat(43)}=`,
  };

  it('accepts a delivery as the description has it', () => {
    expect(webhookViolations(headers, body)).toEqual([]);
  });

  it('names a missing header, a bad signature header, an extra field and a non-canonical body', () => {
    const { 'x-svc-delivery-id': _dropped, ...withoutDelivery } = headers;
    expect(webhookViolations(withoutDelivery, body)).toEqual(['header X-SVC-Delivery-Id is missing']);
    expect(webhookViolations({ ...headers, 'x-svc-signature': 'v1=abc' }, body)[0]).toMatch(
      /X-SVC-Signature/,
    );
    const extra = Buffer.from(body.toString().replace('"user_id"', '"data":1,"user_id"'));
    expect(webhookViolations(headers, extra).join()).toMatch(/additional properties/);
    expect(
      webhookViolations(headers, Buffer.from(JSON.stringify(JSON.parse(body.toString()), null, 1))),
    ).toEqual(['the body is not canonical JSON (sorted keys, no whitespace)']);
  });
});
