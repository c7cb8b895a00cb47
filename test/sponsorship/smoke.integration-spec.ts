import { PARTNER, useSponsorshipStack } from '../support/starters/sponsorship-api';

describe('sponsorship-api smoke', () => {
  const { api } = useSponsorshipStack();

  it('lists the sandbox seats of sandbox-partner', async () => {
    const res = await api.call('GET', '/v1/partners/sponsorships', PARTNER);
    expect(res.status).toBe(200);
    const body = res.json<{ items: { email: string }[] }>();
    expect(body.items.map((s) => s.email)).toEqual(expect.arrayContaining(['alex.morgan@sandbox.test']));
  });

  it('provisions a seat for jo.kim and grants premium', async () => {
    const res = await api.call('POST', '/v1/partners/sponsorships', PARTNER, {
      email: 'Jo.Kim@sandbox.test ',
    });
    expect(res.status).toBe(201);
    const seat = res.json<{ sponsorship_id: string; crew_name: string | null }>();
    // crew_name depends on whether jo.kim has connected sandbox-partner, which other spec files
    // of the run change; crew-names.integration-spec.ts covers it.
    expect(seat).toMatchObject({ status: 'active', email: 'jo.kim@sandbox.test' });
    // jo.kim is the sandbox's free-tier member for every other spec file of the run: the seat
    // goes again, and with it the premium.
    const removed = await api.call('DELETE', `/v1/partners/sponsorships/${seat.sponsorship_id}`, PARTNER);
    expect(removed.json()).toMatchObject({ status: 'cancelled' });
  });
});
