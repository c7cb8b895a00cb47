import type { SandboxPartner } from '@svc/contracts';
import { partner } from '../factories';
import { SPONSORSHIP_API } from '../../../apps/sponsorship-api/src/app.definition';
import { SeatExpiryJob } from '../../../apps/sponsorship-api/src/seats/seat-expiry.job';
import { startCrewApi } from './crew-api';
import { startAuthServer, type AuthServerHarness } from './auth-server';
import { request } from '../http';
import { bootApp, startStack, testAppEnv, useStarted, type Keep } from './app-process';

/** The sandbox partners (docs/rules.md, Sandbox), whose Basic credentials the specs send. */
export const PARTNER = partner('sandbox-partner');
export const PARTNER_B = partner('sandbox-partner-b');
export const SUSPENDED = partner('sandbox-partner-suspended');

export type Credentials = Pick<SandboxPartner, 'client_id' | 'client_secret'>;

export function basic(c: Credentials): string {
  return `Basic ${Buffer.from(`${c.client_id}:${c.client_secret}`).toString('base64')}`;
}

/**
 * sponsorship-api booted in-process (bootApp). It checks Basic credentials with the in-process
 * auth-server (`auth`: factories make partners there) and grants premium on a crew-api started
 * with `{ rpc: true }`. `rpc`: also answer sponsorship-api's RPC queue (the member's sponsorships
 * for consent-ui).
 */
export async function startSponsorshipApi(
  auth: AuthServerHarness,
  env: Readonly<Record<string, string>> = {},
  options: { readonly rpc?: boolean } = {},
) {
  const booted = await bootApp(
    SPONSORSHIP_API,
    testAppEnv('sponsorship-api', auth.services, env),
    options.rpc,
  );
  return {
    ...booted,
    auth,
    /** A call with Basic credentials (undefined: no Authorization header). */
    call: (
      method: string,
      path: string,
      credentials: Credentials | undefined,
      json?: unknown,
      headers: Record<string, string> = {},
    ) =>
      request(`${booted.url}${path}`, {
        method,
        headers: { ...(credentials ? { authorization: basic(credentials) } : {}), ...headers },
        json,
        timeoutMs: 30_000,
      }),
    /** Runs the seat-expiry job once, as each replica's timer does. */
    expireDueSeats: () => booted.app.get(SeatExpiryJob).runOnce(),
  };
}

export type SponsorshipApiHarness = Awaited<ReturnType<typeof startSponsorshipApi>>;

/** What a sponsorship spec runs against: auth-server, crew-api answering its RPCs, sponsorship-api. */
function sponsorshipStack(env: Readonly<Record<string, string>>, options: { readonly rpc?: boolean }) {
  return async (keep: Keep) => {
    const auth = keep(await startAuthServer());
    const crew = keep(await startCrewApi(auth, {}, { rpc: true }));
    return { auth, crew, api: keep(await startSponsorshipApi(auth, env, options)) };
  };
}

export function startSponsorshipStack(
  env: Readonly<Record<string, string>> = {},
  options: { readonly rpc?: boolean } = {},
) {
  return startStack(sponsorshipStack(env, options));
}

export type SponsorshipStack = Awaited<ReturnType<typeof startSponsorshipStack>>;

/** The stack for the specs of one file (or describe block), as useStarted starts it. */
export function useSponsorshipStack(
  env: Readonly<Record<string, string>> = {},
  options: { readonly rpc?: boolean } = {},
) {
  return useStarted(sponsorshipStack(env, options));
}
