import { generateKeyPairSync } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  FRAME_ORIGINS_MAX,
  frameOriginProblem,
  isScope,
  SIGNING_KEY_OVERLAP_DAYS,
  type WebhookSigningKeysResponse,
  type PartnerVerifyRequest,
  type PartnerVerifyResponse,
} from '@svc/contracts';
import {
  APP_CONFIG,
  constantTimeEqual,
  newId,
  newSecret,
  sha256Hex,
  type AppEnv,
  type Resolver,
  type Transaction,
} from '@svc/platform';
import { SecretBox } from '../crypto/secrets';
import { OAuthException } from '../oauth/oauth.exception';
import type { PartnerEntity } from './partner.entity';
import { PartnersRepository, type NewPartner } from './partners.repository';
import { isAcceptableRedirectUri } from './redirect-uri';
import { webhookUrlProblem } from './webhook-url';

export interface ClientCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
}

export interface PartnerRegistration {
  readonly clientId: string;
  readonly name: string;
  readonly redirectUris: readonly string[];
  readonly scopes: readonly string[];
  readonly webhookUrl?: string;
  readonly sponsorship: boolean;
  readonly memberLeft: boolean;
}

export class PartnerRegistrationError extends Error {}

/**
 * The database refused a client that this process remembered as authenticated (its secret was
 * rotated or it was suspended, perhaps on another replica): authenticate it again from the table.
 */
export class RememberedClientStale extends Error {
  constructor(readonly clientId: string) {
    super(`the remembered authentication of ${clientId} is stale`);
  }
}

/** Partners remembered at most; past it the memory starts again (real partners are far fewer). */
const REMEMBERED_MAX = 10_000;

@Injectable()
export class PartnersService {
  constructor(
    private readonly partners: PartnersRepository,
    private readonly box: SecretBox,
    @Inject(APP_CONFIG) private readonly config: { readonly APP_ENV: AppEnv },
  ) {}

  /** How webhook URLs' names are resolved at registration; tests replace it. */
  resolver?: Resolver;

  /** Partners whose secret matched, by client_id, with the digest that matched (never the secret). */
  private readonly remembered = new Map<string, PartnerEntity>();

  /**
   * Client authentication without a database read, for grants whose statement checks the partner
   * row again (its secret digest and that it is not suspended) in the same round trip: a secret
   * whose digest matches the one that last authenticated this client here is accepted from memory,
   * and a rotation or suspension, on any replica, is caught by that statement
   * (`RememberedClientStale`, then `forget` and `authenticate`). Anything else reads the table.
   */
  async authenticateRemembered(credentials: ClientCredentials): Promise<PartnerEntity> {
    const known = this.remembered.get(credentials.clientId);
    if (known && constantTimeEqual(known.secretDigest, sha256Hex(credentials.clientSecret))) return known;
    const partner = await this.authenticate(credentials);
    if (this.remembered.size >= REMEMBERED_MAX) this.remembered.clear();
    this.remembered.set(partner.clientId, partner);
    return partner;
  }

  forget(clientId: string): void {
    this.remembered.delete(clientId);
  }

  /**
   * Client authentication at the token and revocation endpoints (RFC 6749 §2.3.1), by the rule
   * the grants' statements apply (`client_check`). An unknown client costs what a wrong secret does.
   */
  async authenticate(credentials: ClientCredentials): Promise<PartnerEntity> {
    const checked = await this.partners.findChecked(
      credentials.clientId,
      sha256Hex(credentials.clientSecret),
    );
    if (!checked || checked.refusal === 'credentials') {
      throw new OAuthException('invalid_client', 'Client authentication failed.');
    }
    if (checked.refusal === 'suspended') {
      throw new OAuthException('invalid_client', 'This partner account is suspended.');
    }
    const { refusal: _, ...partner } = checked;
    return partner;
  }

  /**
   * Partner endpoints' Basic credentials, presented as the secret's digest: a suspended partner is
   * still answered (valid, suspended) so the caller can say 403 rather than 401.
   */
  async verifyDigest(request: PartnerVerifyRequest): Promise<PartnerVerifyResponse> {
    const partner = await this.partners.findChecked(request.client_id, request.secret_digest);
    if (!partner || partner.refusal === 'credentials') return { valid: false };
    return {
      valid: true,
      partner: {
        client_id: partner.clientId,
        name: partner.name,
        sponsorship: partner.sponsorship,
        member_left: partner.memberLeft,
        suspended: partner.suspended,
      },
    };
  }

  findById(clientId: string): Promise<PartnerEntity | null> {
    return this.partners.findById(clientId);
  }

  list(): Promise<PartnerEntity[]> {
    return this.partners.list();
  }

  /** Onboards a partner; returns the credentials, which are shown once and never stored in plain. */
  async register(
    registration: PartnerRegistration,
  ): Promise<{ clientSecret: string; webhookSecret?: string }> {
    this.check(registration);
    if (registration.webhookUrl !== undefined) await this.checkWebhookUrl(registration.webhookUrl);
    if (await this.partners.findById(registration.clientId)) {
      throw new PartnerRegistrationError(`client_id ${registration.clientId} is taken`);
    }
    const clientSecret = newSecret('cs_');
    const webhookSecret = registration.webhookUrl ? newSecret('whsec_') : undefined;
    await this.partners.insert(this.row(registration, clientSecret, webhookSecret, false));
    return { clientSecret, webhookSecret };
  }

  /** Creates or refreshes a partner with known credentials (the sandbox's, from docs/rules.md). */
  async seed(
    registration: PartnerRegistration,
    clientSecret: string,
    webhookSecret: string | undefined,
    suspended: boolean,
  ) {
    this.check(registration);
    await this.partners.upsert(this.row(registration, clientSecret, webhookSecret, suspended));
  }

  /**
   * Sets (or changes) a partner's webhook URL, checked with the delivery rules. A partner that had
   * no URL gets its first webhook secret, returned once; otherwise the secret stays.
   */
  async setWebhookUrl(clientId: string, webhookUrl: string): Promise<{ webhookSecret?: string }> {
    await this.checkWebhookUrl(webhookUrl);
    const partner = await this.existing(clientId);
    const webhookSecret = partner.webhookSecretCurrent ? undefined : newSecret('whsec_');
    await this.partners.update(clientId, {
      webhookUrl,
      ...(webhookSecret ? { webhookSecretCurrent: this.box.seal(webhookSecret) } : {}),
    });
    return { webhookSecret };
  }

  /**
   * Replaces the origins that may frame the partner's portal (none: it may not be framed). Each
   * must be a CSP host source `https://host[:port]` (frameOriginProblem); duplicates go.
   */
  async setFrameOrigins(clientId: string, origins: readonly string[]): Promise<string[]> {
    const distinct = [...new Set(origins)];
    const problem = distinct.map(frameOriginProblem).find((p) => p !== undefined);
    if (problem) throw new PartnerRegistrationError(problem);
    if (distinct.length > FRAME_ORIGINS_MAX) {
      throw new PartnerRegistrationError(`at most ${FRAME_ORIGINS_MAX} framing origins`);
    }
    await this.update(clientId, { frameOrigins: distinct });
    return distinct;
  }

  private async existing(clientId: string): Promise<PartnerEntity> {
    const partner = await this.partners.findById(clientId);
    if (!partner) throw new PartnerRegistrationError(`no partner ${clientId}`);
    return partner;
  }

  private async checkWebhookUrl(url: string): Promise<void> {
    const problem = await webhookUrlProblem(url, this.config.APP_ENV, this.resolver);
    if (problem) throw new PartnerRegistrationError(problem);
  }

  async rotateSecret(clientId: string): Promise<string> {
    const clientSecret = newSecret('cs_');
    await this.update(clientId, { secretDigest: sha256Hex(clientSecret) });
    // Other replicas learn it from their next grant's statement; this one need not wait for that.
    this.forget(clientId);
    return clientSecret;
  }

  /**
   * Starts a webhook-secret rotation: a new secret becomes `next`, and deliveries are signed with
   * both until `finishWebhookRotation` makes it the only one.
   */
  async rotateWebhookSecret(clientId: string): Promise<string> {
    if (!(await this.existing(clientId)).webhookUrl)
      throw new PartnerRegistrationError(`${clientId} has no webhook URL`);
    const webhookSecret = newSecret('whsec_');
    await this.partners.update(clientId, { webhookSecretNext: this.box.seal(webhookSecret) });
    return webhookSecret;
  }

  async finishWebhookRotation(clientId: string): Promise<void> {
    const next = (await this.partners.findById(clientId))?.webhookSecretNext;
    if (!next) throw new PartnerRegistrationError(`${clientId} has no rotation in progress`);
    await this.partners.update(clientId, { webhookSecretCurrent: next, webhookSecretNext: null });
  }

  /**
   * A new Ed25519 signing key (the partner's first, or the next: the one it replaces signs beside
   * it for SIGNING_KEY_OVERLAP_DAYS, and one replaced before stops now). The private key is sealed
   * as the webhook secrets are and never shown; the answer is the keys' public halves.
   */
  async rotateSigningKey(clientId: string): Promise<WebhookSigningKeysResponse> {
    if (!(await this.existing(clientId)).webhookUrl)
      throw new PartnerRegistrationError(`${clientId} has no webhook URL`);
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x ?? '', 'base64url');
    try {
      await this.partners.addSigningKey(
        clientId,
        {
          id: newId('whk', 16),
          privateKey: this.box.seal(privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64')),
          publicKey: `whpk_${raw.toString('base64')}`,
        },
        SIGNING_KEY_OVERLAP_DAYS,
      );
    } catch (err) {
      // Another rotation of this partner's keys committed first (a double click, the CLI beside the
      // portal): that one is this one, so the key it replaced keeps its overlap rather than going now.
      if ((err as { code?: unknown }).code !== '23505') throw err;
    }
    return this.signingKeys(clientId);
  }

  /** The public halves of the partner's signing keys in use, oldest first. */
  async signingKeys(clientId: string): Promise<WebhookSigningKeysResponse> {
    const keys = await this.partners.signingKeys(clientId);
    return {
      data: keys.map((k) => ({
        id: k.id,
        algorithm: 'Ed25519' as const,
        public_key: k.publicKey,
        created_at: k.createdAt.toISOString(),
        expires_at: k.expiresAt?.toISOString() ?? null,
      })),
    };
  }

  /** Suspends or reinstates the partner; TokensService.setPartnerSuspended also ends its tokens. */
  async setSuspended(tx: Transaction, clientId: string, suspended: boolean): Promise<void> {
    await this.update(clientId, { suspended }, tx);
    this.forget(clientId);
  }

  private async update(clientId: string, changes: Partial<NewPartner>, tx?: Transaction): Promise<void> {
    if (!(await this.partners.update(clientId, changes, tx))) {
      throw new PartnerRegistrationError(`no partner ${clientId}`);
    }
  }

  private row(
    registration: PartnerRegistration,
    clientSecret: string,
    webhookSecret: string | undefined,
    suspended: boolean,
  ) {
    return {
      clientId: registration.clientId,
      secretDigest: sha256Hex(clientSecret),
      name: registration.name,
      redirectUris: [...registration.redirectUris],
      // Registered on their own (setFrameOrigins); the sandbox partners have none.
      frameOrigins: [],
      allowedScopes: [...registration.scopes],
      webhookUrl: registration.webhookUrl ?? null,
      webhookSecretCurrent: webhookSecret ? this.box.seal(webhookSecret) : null,
      webhookSecretNext: null,
      sponsorship: registration.sponsorship,
      memberLeft: registration.memberLeft,
      suspended,
    };
  }

  private check(registration: PartnerRegistration): void {
    if (!/^[A-Za-z0-9._-]{3,64}$/.test(registration.clientId)) {
      throw new PartnerRegistrationError('client_id must be 3-64 letters, digits, ".", "_" or "-"');
    }
    if (registration.redirectUris.length === 0)
      throw new PartnerRegistrationError('at least one redirect URI');
    const bad = registration.redirectUris.find((u) => !isAcceptableRedirectUri(u));
    if (bad) {
      throw new PartnerRegistrationError(
        `redirect URI ${bad} must be https (or http://localhost, http://127.0.0.1)`,
      );
    }
    const unknown = registration.scopes.find((s) => !isScope(s));
    if (unknown || registration.scopes.length === 0) {
      throw new PartnerRegistrationError(
        `scopes must be a non-empty subset of the service's scopes (got ${unknown ?? 'none'})`,
      );
    }
    if (registration.webhookUrl !== undefined) {
      try {
        new URL(registration.webhookUrl);
      } catch {
        throw new PartnerRegistrationError(`webhook URL ${registration.webhookUrl} is not a URL`);
      }
    }
  }
}
