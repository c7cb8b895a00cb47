import { SANDBOX_MEMBERS, SANDBOX_PARTNERS } from '@svc/contracts';
import { authorizeRequest, basicAuthorization, member, partner } from '../support/factories';
import { consentPage, obtainTokenPairs } from '../support/oauth/token-pairs';
import { FormClient, formWithButton } from '../support/oauth/forms';
import { request } from '../support/http';
import type { FuzzCredentials } from './requests';

/**
 * Real credentials for the system under fuzz, obtained as a partner and a member would: token
 * pairs from the code flow with PKCE (the fault matrix's helper), a signed-in member's session on
 * the consent screen, real cursors and seat ids from the first pages. With them requests reach
 * past the 401 wall into the handlers.
 */
export async function obtainFuzzCredentials(baseUrl: string, publicOrigin: string): Promise<FuzzCredentials> {
  const [main, ...spare] = await obtainTokenPairs(baseUrl, publicOrigin, 4);
  const p = partner('sandbox-partner');
  const basic = basicAuthorization(p.client_id, p.client_secret);

  const vessels = await request(`${baseUrl}/v1/me/vessels?limit=1`, {
    headers: { authorization: `Bearer ${main.access_token}` },
  });
  const seats = await request(`${baseUrl}/v1/partners/sponsorships?limit=200`, {
    headers: { authorization: basic },
  });
  const seatPage = seats.json<{
    items: { sponsorship_id: string; email: string; external_ref: string | null }[];
  }>();
  const firstSeat = await request(`${baseUrl}/v1/partners/sponsorships?limit=1`, {
    headers: { authorization: basic },
  });

  return {
    accessToken: main.access_token,
    spareTokens: spare.flatMap((pair) => [pair.refresh_token, pair.access_token]),
    partners: SANDBOX_PARTNERS.map((x) => ({ id: x.client_id, secret: x.client_secret })),
    redirectUris: SANDBOX_PARTNERS.flatMap((x) => x.redirect_uris),
    vesselsCursor: vessels.json<{ next_cursor: string | null }>().next_cursor ?? undefined,
    seatsCursor: firstSeat.json<{ next_cursor: string | null }>().next_cursor ?? undefined,
    seatIds: seatPage.items.map((s) => s.sponsorship_id),
    userIds: SANDBOX_MEMBERS.map((m) => m.user_id),
    emails: [...new Set([...SANDBOX_MEMBERS.map((m) => m.email), ...seatPage.items.map((s) => s.email)])],
    externalRefs: seatPage.items.flatMap((s) => (s.external_ref ? [s.external_ref] : [])),
    session: await consentSession(baseUrl, publicOrigin),
  };
}

/** jo.kim signed in, on the consent screen of a valid request: the cookie and the form's fields. */
async function consentSession(baseUrl: string, publicOrigin: string): Promise<FuzzCredentials['session']> {
  const browser = new FormClient(baseUrl, [publicOrigin]);
  const req = authorizeRequest({ partner: partner('sandbox-partner'), scope: 'profile:read' });
  const consent = await consentPage(browser, req.params, member('jo.kim@sandbox.test').email);
  const form = formWithButton(consent, 'Allow');
  return {
    cookie: browser.cookieHeader(),
    form: Object.fromEntries(form.inputs.map((i) => [i.name, i.value])),
  };
}
