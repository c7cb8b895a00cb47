import { startAuthServer, type AuthServerHarness } from '../oauth/support/auth-server';
import { startCrewApi, type CrewApiHarness } from '../crew/support/crew-api';
import { PARTNER, startSponsorshipApi, type SponsorshipApiHarness } from './support/sponsorship-api';

describe('sponsorship-api smoke', () => {
  let auth: AuthServerHarness;
  let crew: CrewApiHarness;
  let api: SponsorshipApiHarness;

  beforeAll(async () => {
    auth = await startAuthServer();
    crew = await startCrewApi(auth, {}, { rpc: true });
    api = await startSponsorshipApi(auth);
  }, 60_000);

  afterAll(async () => {
    await api?.close();
    await crew?.close();
    await auth?.close();
  });

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
    const seat = res.json<{ sponsorship_id: string }>();
    expect(seat).toMatchObject({ status: 'active', email: 'jo.kim@sandbox.test', crew_name: 'Jo Kim' });
    // jo.kim is the sandbox's free-tier member for every other spec file of the run: the seat
    // goes again, and with it the premium.
    const removed = await api.call('DELETE', `/v1/partners/sponsorships/${seat.sponsorship_id}`, PARTNER);
    expect(removed.json()).toMatchObject({ status: 'cancelled' });
  });
});
