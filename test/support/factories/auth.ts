import type { INestApplicationContext } from '@nestjs/common';
import { TransactionRunner } from '@svc/platform';
import { randomBytes } from 'node:crypto';
import { ConsentsRepository } from '../../../apps/auth-server/src/consents/consents.repository';
import { TokensService } from '../../../apps/auth-server/src/tokens/tokens.service';
import { PartnersService } from '../../../apps/auth-server/src/partners/partners.service';
import { UsersService } from '../../../apps/auth-server/src/users/users.service';

/**
 * auth-server's data (partners, members' sign-in identities, consents), made by auth-server itself:
 * through the services of the in-process app, the way its partner CLI and sandbox seed write them,
 * so a test never depends on the layout of auth-server's tables.
 */
export interface AuthApp {
  readonly app: INestApplicationContext;
}

export interface PartnerOptions {
  readonly clientId?: string;
  readonly name?: string;
  readonly scopes?: readonly string[];
  readonly webhookUrl?: string | null;
  /** 2: a webhook-secret rotation in progress, deliveries signed with both. */
  readonly webhookSecrets?: 1 | 2;
  readonly sponsorship?: boolean;
  readonly memberLeft?: boolean;
  readonly suspended?: boolean;
}

export interface FactoryPartner {
  readonly clientId: string;
  readonly clientSecret: string;
  /** Current first, then the next one of a rotation; none without a webhook URL. */
  readonly webhookSecrets: string[];
}

export async function createPartner(auth: AuthApp, options: PartnerOptions = {}): Promise<FactoryPartner> {
  const partners = auth.app.get(PartnersService);
  const clientId = options.clientId ?? `it-${randomBytes(6).toString('hex')}`;
  const { clientSecret, webhookSecret } = await partners.register({
    clientId,
    name: options.name ?? `IT ${clientId}`,
    redirectUris: ['https://partner.example/callback'],
    scopes: options.scopes ?? ['profile:read'],
    webhookUrl: options.webhookUrl ?? undefined,
    sponsorship: options.sponsorship ?? false,
    memberLeft: options.memberLeft ?? false,
  });
  const webhookSecrets = webhookSecret ? [webhookSecret] : [];
  if (webhookSecret && options.webhookSecrets === 2) {
    webhookSecrets.push(await partners.rotateWebhookSecret(clientId));
  }
  if (options.suspended) await auth.app.get(TokensService).setPartnerSuspended(clientId, true);
  return { clientId, clientSecret, webhookSecrets };
}

export interface FactoryMember {
  readonly user_id: string;
  readonly email: string;
  readonly name: string;
}

/** A member's sign-in identity (no crew record): a new user id and e-mail on every call. */
export async function createUser(auth: AuthApp, name?: string): Promise<FactoryMember> {
  const suffix = randomBytes(6).toString('hex');
  const user = {
    user_id: `usr_test_${suffix}`,
    email: `crew-${suffix}@factory.test`,
    name: name ?? `Crew ${suffix}`,
  };
  const password = randomBytes(12).toString('hex');
  await auth.app
    .get(UsersService)
    .seedAll([{ userId: user.user_id, email: user.email, name: user.name, password }]);
  return user;
}

/** The member allowed the partner these scopes (as the consent screen records it). */
export async function grantConsent(
  auth: AuthApp,
  userId: string,
  clientId: string,
  scopes: readonly string[],
): Promise<void> {
  const consents = auth.app.get(ConsentsRepository);
  await auth.app.get(TransactionRunner).run((tx) => consents.grant(tx, userId, clientId, scopes));
}
