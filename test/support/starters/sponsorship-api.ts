import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { SandboxPartner } from '@svc/contracts';
import { Pool } from 'pg';
import { partner } from '../factories';
import { SPONSORSHIP_API } from '../../../apps/sponsorship-api/src/app.definition';
import { SeatExpiryJob } from '../../../apps/sponsorship-api/src/seats/seat-expiry.job';
import { startCrewApi, type CrewApiHarness } from './crew-api';
import { startAuthServer, type AuthServerHarness } from './auth-server';
import { request, type HttpResponse } from '../http';
import { bootApp, startStack, testAppEnv, useStarted } from './app-process';

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
 * auth-server and grants premium on a crew-api started with `{ rpc: true }`.
 */
export interface SponsorshipApiHarness {
  readonly url: string;
  readonly app: NestFastifyApplication;
  readonly db: Pool;
  /** The auth-server it asks about partners: factories make partners there. */
  readonly auth: AuthServerHarness;
  /** A call with Basic credentials (undefined: no Authorization header). */
  call(
    method: string,
    path: string,
    credentials: Credentials | undefined,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<HttpResponse>;
  /** Runs the seat-expiry job once, as each replica's timer does. */
  expireDueSeats(): Promise<number>;
  close(): Promise<void>;
}

/** `rpc`: also answer sponsorship-api's RPC queue (the member's sponsorships for consent-ui). */
export async function startSponsorshipApi(
  auth: AuthServerHarness,
  env: Readonly<Record<string, string>> = {},
  options: { readonly rpc?: boolean } = {},
): Promise<SponsorshipApiHarness> {
  const sponsorshipEnv = testAppEnv('sponsorship-api', auth.services, env);
  const { app, url } = await bootApp(SPONSORSHIP_API, sponsorshipEnv, options.rpc);
  const db = new Pool({ connectionString: auth.services.databaseUrl, max: 4 });
  return {
    url,
    app,
    db,
    auth,
    call: (method, path, credentials, body, headers = {}) =>
      request(`${url}${path}`, {
        method,
        headers: {
          ...(credentials ? { authorization: basic(credentials) } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
        timeoutMs: 30_000,
      }),
    expireDueSeats: () => app.get(SeatExpiryJob).runOnce(),
    async close() {
      await app.close();
      await db.end();
    },
  };
}

/** What a sponsorship spec runs against: auth-server, crew-api answering its RPCs, sponsorship-api. */
export interface SponsorshipStack {
  readonly auth: AuthServerHarness;
  readonly crew: CrewApiHarness;
  readonly api: SponsorshipApiHarness;
  /** Closes the three in reverse order of their start. */
  close(): Promise<void>;
}

export function startSponsorshipStack(
  env: Readonly<Record<string, string>> = {},
  options: { readonly rpc?: boolean } = {},
): Promise<SponsorshipStack> {
  return startStack(async (keep) => {
    const auth = keep(await startAuthServer());
    const crew = keep(await startCrewApi(auth, {}, { rpc: true }));
    return { auth, crew, api: keep(await startSponsorshipApi(auth, env, options)) };
  });
}

/** The stack for the specs of one file (or describe block), as useStarted starts it. */
export function useSponsorshipStack(
  env: Readonly<Record<string, string>> = {},
  options: { readonly rpc?: boolean } = {},
): Omit<SponsorshipStack, 'close'> {
  return useStarted(() => startSponsorshipStack(env, options), ['auth', 'crew', 'api']);
}
