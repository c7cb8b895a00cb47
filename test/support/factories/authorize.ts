import { randomBytes } from 'node:crypto';
import type { SandboxPartner } from '@svc/contracts';
import { partner } from './partners';
import { pkcePair, type PkcePair } from './pkce';

/** A fresh, valid authorization request (docs/rules.md, OAuth endpoints) and its PKCE verifier. */
export interface AuthorizeRequest {
  readonly params: Record<string, string>;
  readonly pkce: PkcePair;
  readonly state: string;
  readonly redirectUri: string;
  readonly partner: SandboxPartner;
}

export function randomState(): string {
  return randomBytes(16).toString('base64url');
}

export function authorizeRequest(
  options: {
    partner?: SandboxPartner;
    scope?: string;
    redirectUri?: string;
    state?: string;
    overrides?: Record<string, string | undefined>;
  } = {},
): AuthorizeRequest {
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
