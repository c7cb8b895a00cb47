import { Injectable } from '@nestjs/common';
import { AUTH_PARTNER_VERIFY, type VerifiedPartner } from '@svc/contracts';
import { RpcClient, sha256Hex } from '@svc/platform';
import { askAuthServer } from './introspector';

/**
 * The partner when the Basic credentials are right; rejects with DependencyUnavailableError when
 * auth-server cannot answer (503, fail closed).
 */
export abstract class PartnerVerifier {
  abstract verify(clientId: string, clientSecret: string): Promise<VerifiedPartner | undefined>;
}

/** How long a confirmed answer is reused: a rotated secret or a suspension bites within this. */
export const PARTNER_CREDENTIALS_TTL_MS = 5_000;
const MAX_CACHED = 10_000;

/**
 * Asks auth-server with only the secret's SHA-256, and keeps a confirmed answer for a few seconds
 * (partners call in bursts); wrong credentials are never cached.
 */
@Injectable()
export class RpcPartnerVerifier extends PartnerVerifier {
  private readonly cache = new Map<string, { readonly partner: VerifiedPartner; readonly until: number }>();
  /** The clock of the cache's lifetimes (tests move it). */
  now: () => number = Date.now;

  constructor(private readonly rpc: RpcClient) {
    super();
  }

  async verify(clientId: string, clientSecret: string): Promise<VerifiedPartner | undefined> {
    // No registered client_id holds a NUL (PostgreSQL text refuses one): not a partner, no question asked.
    if (clientId.includes('\u0000')) return undefined;
    const digest = sha256Hex(clientSecret);
    const key = `${clientId}\n${digest}`;
    const hit = this.cache.get(key);
    if (hit && hit.until > this.now()) return hit.partner;
    this.cache.delete(key);

    const answer = await askAuthServer(this.rpc, AUTH_PARTNER_VERIFY, {
      client_id: clientId,
      secret_digest: digest,
    });
    if (!answer.valid) return undefined;
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(key, { partner: answer.partner, until: this.now() + PARTNER_CREDENTIALS_TTL_MS });
    return answer.partner;
  }
}
