import { toPortalProblem } from '@svc/contracts';
import { ApiProblem, ValidationProblem } from '@svc/platform';
import type { PartnerWebhooksService } from '../partner-webhooks/partner-webhooks.service';
import type { PartnerPortalRepository } from './partner-portal.repository';
import { PartnerPortalService, portalSlotsPerPartner } from './partner-portal.service';

describe('toPortalProblem: the API’s answer, carried to the portal', () => {
  it('keeps the status, code and detail, and the Retry-After of a 429 in seconds', () => {
    expect(
      toPortalProblem(
        new ApiProblem('rate_limit_exceeded', 'retry after 42 seconds', { headers: { 'retry-after': '42' } }),
      ),
    ).toEqual({
      status: 429,
      code: 'rate_limit_exceeded',
      detail: 'retry after 42 seconds',
      retry_after: 42,
    });
    expect(toPortalProblem(new ApiProblem('conflict', 'still being attempted'))).toEqual({
      status: 409,
      code: 'conflict',
      detail: 'still being attempted',
    });
  });

  it('keeps a 422’s field errors', () => {
    const problem = toPortalProblem(
      new ValidationProblem([{ field: 'until', message: 'must be at most 7 days after since' }]),
    );
    expect(problem).toMatchObject({
      status: 422,
      code: 'invalid_request',
      errors: [{ field: 'until', message: 'must be at most 7 days after since' }],
    });
  });
});

describe('PartnerPortalService: one partner holds at most its share of the RPC consumer', () => {
  it('answers a partner’s questions beyond its slots at once with 429, and another partner’s as usual', async () => {
    expect(portalSlotsPerPartner(20)).toBe(2);
    expect(portalSlotsPerPartner(5)).toBe(1);
    const hanging: (() => void)[] = [];
    const webhooks = {
      // Partner a's endpoint hangs: its tests wait until released.
      test: (p: { client_id: string }) =>
        new Promise((resolve) => hanging.push(() => resolve({ partner: p.client_id }))),
      endpoint: (p: { client_id: string }) => Promise.resolve({ url: `https://${p.client_id}.example` }),
      signingKeys: () => Promise.resolve({ data: [] }),
    } as unknown as PartnerWebhooksService;
    const recorded: string[] = [];
    const repository = {
      hours: () => Promise.resolve([]),
      record: (a: { clientId: string; outcome: string }) => {
        recorded.push(`${a.clientId} ${a.outcome}`);
        return Promise.resolve();
      },
    } as unknown as PartnerPortalRepository;
    const service = new PartnerPortalService(webhooks, repository, { AMQP_PREFETCH: 20 });
    const test = (clientId: string) =>
      service.act({ client_id: clientId, portal_session: 'pps_x', action: 'test' });

    const held = [test('a'), test('a')];
    const refused = await test('a');
    expect(refused).toEqual({
      ok: false,
      problem: expect.objectContaining({ status: 429, code: 'rate_limit_exceeded', retry_after: 1 }),
    });
    await expect(service.overview('a')).resolves.toMatchObject({ ok: false, problem: { status: 429 } });
    await expect(service.overview('b')).resolves.toEqual({
      ok: true,
      result: { endpoint: { url: 'https://b.example' }, hours: [], signing_keys: [] },
    });

    for (const release of hanging) release();
    await Promise.all(held);
    await expect(service.overview('a')).resolves.toMatchObject({ ok: true });
    expect(recorded).toEqual(['a rate_limit_exceeded', 'a ok', 'a ok']);
  });
});
