import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createLogger, loadConfig } from '@svc/platform';
import { Pool } from 'pg';
import { SPONSORSHIP_API } from '../../../apps/sponsorship-api/src/app.definition';
import { SeatExpiryJob } from '../../../apps/sponsorship-api/src/seats/seat-expiry.job';
import { asBrokerUser, resourceAppEnv, startCrewApi, type CrewApiHarness } from './crew-api';
import { startAuthServer, startedLater, type AuthServerHarness } from './auth-server';
import { request, type HttpResponse } from '../http';
import { bootApp } from './app-process';

/** The sandbox partners' Basic credentials (docs/rules.md, Sandbox). */
export const PARTNER = { id: 'sandbox-partner', secret: 'sandbox-secret' } as const;
export const PARTNER_B = { id: 'sandbox-partner-b', secret: 'sandbox-secret-b' } as const;
export const SUSPENDED = { id: 'sandbox-partner-suspended', secret: 'sandbox-secret-suspended' } as const;

export interface Credentials {
  readonly id: string;
  readonly secret: string;
}

export function basic(c: Credentials): string {
  return `Basic ${Buffer.from(`${c.id}:${c.secret}`).toString('base64')}`;
}

/** sponsorship-api's environment in the tests; the tests run the expiry job themselves (runOnce). */
export function sponsorshipApiEnv(
  auth: AuthServerHarness,
  overrides: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return asBrokerUser('sponsorship-api', resourceAppEnv(auth, { SEAT_EXPIRY_INTERVAL: '0s', ...overrides }));
}

/**
 * sponsorship-api booted in-process as `serveApp` boots it (its real root module and error
 * mapping), on a free port, after its sandbox seed. It checks Basic credentials with the
 * in-process auth-server and grants premium on a crew-api started with `{ rpc: true }`.
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

export interface SponsorshipApiStartOptions {
  /** Also answer sponsorship-api's RPC queue (the member's sponsorships for consent-ui), as `serveApp` does. */
  readonly rpc?: boolean;
}

export async function startSponsorshipApi(
  auth: AuthServerHarness,
  env: Readonly<Record<string, string>> = {},
  options: SponsorshipApiStartOptions = {},
): Promise<SponsorshipApiHarness> {
  const config = loadConfig(SPONSORSHIP_API.config, { PORT: '1', ...sponsorshipApiEnv(auth, env) });
  const logger = createLogger('sponsorship-api', process.env.SPONSORSHIP_TEST_LOG_LEVEL ?? 'silent');
  if (!SPONSORSHIP_API.seed) throw new Error('sponsorship-api has no sandbox seed');
  await SPONSORSHIP_API.seed(config, logger);

  const { app, url } = await bootApp(SPONSORSHIP_API, config, logger, options.rpc);
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

/** Starts the three; if one fails to start, the ones already running are closed before it rethrows. */
export async function startSponsorshipStack(
  env: Readonly<Record<string, string>> = {},
  options: SponsorshipApiStartOptions = {},
): Promise<SponsorshipStack> {
  const started: { close(): Promise<void> }[] = [];
  const close = async () => {
    for (const harness of started.splice(0).reverse()) await harness.close();
  };
  try {
    const auth = await startAuthServer();
    started.push(auth);
    const crew = await startCrewApi(auth, {}, { rpc: true });
    started.push(crew);
    const api = await startSponsorshipApi(auth, env, options);
    started.push(api);
    return { auth, crew, api, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The stack for the specs of one file (or describe block): started in its beforeAll, closed in its afterAll. */
export function useSponsorshipStack(
  env: Readonly<Record<string, string>> = {},
  options: SponsorshipApiStartOptions = {},
): Omit<SponsorshipStack, 'close'> {
  let stack: SponsorshipStack | undefined;
  beforeAll(async () => {
    stack = await startSponsorshipStack(env, options);
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });
  return {
    auth: startedLater(() => stack?.auth),
    crew: startedLater(() => stack?.crew),
    api: startedLater(() => stack?.api),
  };
}
