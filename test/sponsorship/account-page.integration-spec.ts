import { SPONSORSHIP_MEMBER_SPONSORSHIPS } from '@svc/contracts';
import { launchBrowser } from '../support/browser';
import { startConsentUi, type ConsentUiHarness } from '../support/starters/consent-ui';
import { MEMBER_PASSWORD } from '../support/factories';
import { seatOf, statusOf } from '../support/sponsorship';
import { createPartner } from '../support/app-factories';
import { PARTNER, startSponsorshipStack, type SponsorshipStack } from '../support/starters/sponsorship-api';

/**
 * The crew member sees who sponsors them: their account page (`/account/connections`) lists
 * every partner whose seat gave them premium, with since and until, asked of sponsorship-api
 * over `sponsorship.member.sponsorships` (consent-ui never reads sponsorship-api's schema).
 */
jest.setTimeout(60_000);

const SEATS = '/v1/partners/sponsorships';
const ALEX = 'alex.morgan@sandbox.test';
const ALEX_ID = 'usr_sandbox_alex_morgan';
/** "5 March 2026", computed by the platform's date formatting rather than a copy of the page's. */
const day = (iso: string) =>
  new Date(iso).toLocaleDateString('en-GB', {
    timeZone: 'UTC',
    day: 'numeric',
    month: 'long',
    year: 'numeric',
  });

/** The row of the sponsorships table naming `partnerName`, or undefined. */
function rowOf(html: string, partnerName: string): string | undefined {
  return html
    .split('<tr>')
    .find((row) => row.includes(`<th scope="row">${partnerName}</th>`))
    ?.split('</tr>')[0];
}

describe('account page: the member’s sponsorships', () => {
  let stack: SponsorshipStack | undefined;
  let ui: ConsentUiHarness | undefined;

  beforeAll(async () => {
    stack = await startSponsorshipStack({}, { rpc: true });
    ui = await startConsentUi(stack.auth);
  }, 60_000);

  afterAll(async () => {
    await ui?.close();
    await stack?.close();
  });

  async function accountPage(): Promise<string> {
    const browser = await ui!.signIn(ALEX);
    const res = await browser.fetch('/account/connections');
    expect(res.status).toBe(200);
    return res.text();
  }

  it('answers the member’s seats of every partner over RPC, with the partner’s name', async () => {
    const { sponsorships } = await stack!.auth.rpc.call(SPONSORSHIP_MEMBER_SPONSORSHIPS, {
      user_id: ALEX_ID,
    });
    expect(sponsorships).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ client_id: PARTNER.client_id, partner_name: 'Sandbox Partner' }),
      ]),
    );
    const none = await stack!.auth.rpc.call(SPONSORSHIP_MEMBER_SPONSORSHIPS, {
      user_id: 'usr_nobody_at_all',
    });
    expect(none).toEqual({ sponsorships: [] });
  });

  it('lists the sandbox sponsor and a new partner’s seat with since and until, and keeps it listed once removed', async () => {
    const api = stack!.api;
    const partner = await createPartner(api.auth, { sponsorship: true });
    const expiresAt = new Date(Date.now() + 200 * 86_400_000);
    expiresAt.setUTCMilliseconds(0);
    const provisioned = await api.call('POST', SEATS, partner, {
      email: ALEX,
      expires_at: expiresAt.toISOString(),
    });
    expect(statusOf(provisioned)).toMatchObject({ status: 201 });
    const seat = seatOf(provisioned);
    expect(seat.status).toBe('active');

    const before = await accountPage();
    expect(before).toContain('<h2 id="sponsorships-heading">Sponsorships</h2>');
    expect(rowOf(before, 'Sandbox Partner')).toBeDefined();
    const row = rowOf(before, partner.name);
    expect(row).toContain(`<time datetime="${seat.activated_at}">${day(seat.activated_at!)}</time>`);
    expect(row).toContain(
      `<time datetime="${expiresAt.toISOString()}">${day(expiresAt.toISOString())}</time>`,
    );
    expect(row).toContain('Sponsoring you');

    const removed = await api.call('DELETE', `${SEATS}/${seat.sponsorship_id}`, partner);
    expect(statusOf(removed)).toMatchObject({ status: 200 });

    const after = await accountPage();
    const closed = rowOf(after, partner.name);
    expect(closed).toContain('Cancelled by the partner');
    expect(closed).toContain(`<time datetime="${seat.activated_at}">`);
    expect(closed).not.toContain(expiresAt.toISOString());
  });

  it('shows a member in Chromium who sponsors them, found by the table’s accessible names', async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.context.newPage();
      await page.goto(`${ui!.url}/login?return_to=%2Faccount%2Fconnections`);
      await page.getByLabel('Email').fill(ALEX);
      await page.getByLabel('Password').fill(MEMBER_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/account\/connections$/);
      const table = page.getByRole('region', { name: 'Sponsorships' }).getByRole('table');
      await expect(table.getByRole('columnheader').allTextContents()).resolves.toEqual([
        'Partner',
        'Since',
        'Until',
        'Status',
      ]);
      const row = table.getByRole('row', { name: /Sandbox Partner/ });
      await expect(row.count()).resolves.toBeGreaterThanOrEqual(1);
      await expect(row.first().getByRole('rowheader').textContent()).resolves.toBe('Sandbox Partner');
    } finally {
      await browser.close();
    }
  });
});
