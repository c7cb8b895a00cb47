import { randomBytes } from 'node:crypto';
import { basicAuthorization, member, partner, type MemberEmail } from './factories';
import { FormClient } from './oauth/forms';
import { request, type HttpResponse } from './http';
import type { RunningSystem } from './system';
import type { WebhookReceiver } from './webhook-receiver';
import { SANDBOX_CLIENT, tokenPair, type OAuthClient, type TokenPair } from './oauth/token-pairs';

export type { TokenPair };
export const A = partner('sandbox-partner');
export const B = partner('sandbox-partner-b');
export const BASIC_A = basicAuthorization(A.client_id, A.client_secret);
export const BASIC_B = basicAuthorization(B.client_id, B.client_secret);
export const INTERNAL = 'Bearer sandbox-internal-token';
export const REDIRECT_URI = A.redirect_uris[0];

/** A POST of form fields (the token and revocation endpoints). */
export function postForm(url: string, fields: Record<string, string>): Promise<HttpResponse> {
  return request(url, { method: 'POST', form: fields, timeoutMs: 30_000 });
}

/**
 * A token pair of sandbox-partner (or `client`) for `email`, through the gateway as a browser and
 * a partner would get it: /oauth/authorize, the sign-in form, the consent form, the code exchange.
 */
export function authorize(
  system: RunningSystem,
  email: MemberEmail,
  scope = 'profile:read seatime:read vessels:read',
  client: OAuthClient = SANDBOX_CLIENT,
): Promise<TokenPair> {
  const browser = new FormClient(system.baseUrl, [`http://localhost:${system.gatewayPort}`]);
  return tokenPair(browser, { client, scope, email: member(email).email });
}

/** Refreshes at `base` (the gateway, or one auth-server replica). */
export function refresh(base: string, refreshToken: string): Promise<HttpResponse> {
  return postForm(`${base}/oauth/token`, {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: A.client_id,
    client_secret: A.client_secret,
  });
}

export function bearer(
  url: string,
  token: string,
  headers: Record<string, string> = {},
): Promise<HttpResponse> {
  return request(url, { bearer: token, headers, timeoutMs: 30_000 });
}

export function json(
  url: string,
  method: string,
  authorization: string,
  body?: unknown,
): Promise<HttpResponse> {
  return request(url, { method, headers: { authorization }, json: body, timeoutMs: 30_000 });
}

export interface RegisteredPartner {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly basic: string;
  /** Its endpoint's path on the receiver. */
  readonly hook: string;
  /** The registered webhook URL. */
  readonly hookUrl: string;
  readonly client: OAuthClient;
}

/**
 * A partner of one test file alone, registered with the partners CLI as an operator would
 * (`profile:read`, one redirect URI): client_id `<prefix>-<random>`, its webhooks on `receiver`
 * at `/hooks/<client_id>`, answering what `answers` holds for that path (204 to begin with; 'hang':
 * never).
 */
export async function registerPartner(
  on: { system: RunningSystem; receiver: WebhookReceiver; answers: Map<string, number | 'hang'> },
  prefix: string,
  name: string,
  redirectUri = 'http://localhost:8799/callback',
): Promise<RegisteredPartner> {
  const { system, receiver, answers } = on;
  const clientId = `${prefix}-${randomBytes(4).toString('hex')}`;
  const hook = `/hooks/${clientId}`;
  answers.set(hook, 204);
  const hookUrl = receiver.endpoint(hook, () => answers.get(hook) ?? 500);
  const created = await system.cli('auth-server', [
    'partners',
    'create',
    '--client-id',
    clientId,
    '--name',
    name,
    '--redirect-uri',
    redirectUri,
    '--scopes',
    'profile:read',
    '--webhook-url',
    hookUrl,
  ]);
  if (created.code !== 0) throw new Error(`partners create failed: ${created.stderr}`);
  const clientSecret = /client_secret\s+(\S+)/.exec(created.stdout)?.[1];
  if (!clientSecret) throw new Error(`no client_secret in: ${created.stdout}`);
  return {
    clientId,
    clientSecret,
    basic: basicAuthorization(clientId, clientSecret),
    hook,
    hookUrl,
    client: { client_id: clientId, client_secret: clientSecret, redirect_uri: redirectUri },
  };
}
