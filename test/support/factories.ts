import { createHash, randomBytes } from 'node:crypto';
import {
  SANDBOX_MEMBERS,
  SANDBOX_PARTNERS,
  SANDBOX_PASSWORD,
  type SandboxMember,
  type SandboxPartner,
} from '@svc/contracts';

/** The seeded sandbox identities of docs/rules.md, looked up by name (read-only constants). */
export type PartnerId = 'sandbox-partner' | 'sandbox-partner-b' | 'sandbox-partner-suspended';
export type MemberEmail = 'alex.morgan@sandbox.test' | 'sam.lee@sandbox.test' | 'jo.kim@sandbox.test';

export function partner(clientId: PartnerId = 'sandbox-partner'): SandboxPartner {
  const found = SANDBOX_PARTNERS.find((p) => p.client_id === clientId);
  if (!found) throw new Error(`no sandbox partner ${clientId}`);
  return found;
}

export function member(email: MemberEmail = 'alex.morgan@sandbox.test'): SandboxMember {
  const found = SANDBOX_MEMBERS.find((m) => m.email === email);
  if (!found) throw new Error(`no sandbox member ${email}`);
  return found;
}

export const MEMBER_PASSWORD = SANDBOX_PASSWORD;

/** `Authorization: Basic …` with the form-urlencoded id and secret (RFC 6749 §2.3.1). */
export function basicAuthorization(clientId: string, clientSecret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(clientId)}:${enc(clientSecret)}`).toString('base64')}`;
}

/** `base64url(sha256(verifier))` without padding (RFC 7636 §4.2). */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/**
 * A verifier of exactly `length` characters from the unreserved set of RFC 7636 §4.1
 * (`[A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~"`). Lengths outside 43-128 are for tests of
 * the rejection.
 */
export function codeVerifier(length = 64): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~';
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i += 1) out += alphabet[bytes[i] % alphabet.length];
  return out;
}

/** A PKCE pair (RFC 7636 §4.1, §4.2): a fresh, single-use verifier and its S256 challenge. */
export function pkcePair(length = 64) {
  const verifier = codeVerifier(length);
  return { verifier, challenge: s256(verifier) };
}

export function randomState(): string {
  return randomBytes(16).toString('base64url');
}

/** A fresh, valid authorization request (docs/rules.md, OAuth endpoints) and its PKCE verifier. */
export function authorizeRequest(
  options: {
    partner?: SandboxPartner;
    scope?: string;
    redirectUri?: string;
    state?: string;
    overrides?: Record<string, string | undefined>;
  } = {},
) {
  const p = options.partner ?? partner();
  const pkce = pkcePair();
  const state = options.state ?? randomState();
  const redirectUri = options.redirectUri ?? p.redirect_uris[0];
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: p.client_id,
    redirect_uri: redirectUri,
    scope: options.scope ?? p.scopes.join(' '),
    state,
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries(options.overrides ?? {})) {
    if (v === undefined) delete params[k];
    else params[k] = v;
  }
  return { params, pkce, state, redirectUri, partner: p };
}

/** An opaque token no server ever issued. */
export function unknownToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The token response of docs/rules.md (Resources, Token response). */
export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: string;
  readonly expires_in: number;
  readonly refresh_token: string;
  readonly scope: string;
}

/** An `application/x-www-form-urlencoded` body; a list of pairs keeps repeated names. */
export function formBody(fields: Record<string, string> | readonly (readonly [string, string])[]): string {
  const pairs = Array.isArray(fields) ? fields : Object.entries(fields);
  const body = new URLSearchParams();
  for (const [k, v] of pairs as readonly (readonly [string, string])[]) body.append(k, v);
  return body.toString();
}
