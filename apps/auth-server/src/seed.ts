import { SANDBOX_MEMBERS, SANDBOX_PARTNERS, SANDBOX_PASSWORD, SANDBOX_WEBHOOK_SECRET } from '@svc/contracts';
import type { ConfigOf } from '@svc/platform';
import type { Logger } from 'pino';
import type { AUTH_SERVER_CONFIG } from './config';
import { withCoreContext } from './core-context';
import { PartnersService } from './partners/partners.service';
import { UsersService } from './users/users.service';

/** The sandbox partners and crew members' credentials of docs/rules.md. Idempotent. */
export async function seedSandbox(
  config: ConfigOf<typeof AUTH_SERVER_CONFIG>,
  logger: Logger,
): Promise<void> {
  await withCoreContext(config, logger, async (context) => {
    const partners = context.get(PartnersService);
    for (const p of SANDBOX_PARTNERS) {
      await partners.seed(
        {
          clientId: p.client_id,
          name: p.name,
          redirectUris: p.redirect_uris,
          scopes: p.scopes,
          webhookUrl: p.webhook ? config.SANDBOX_WEBHOOK_URL : undefined,
          sponsorship: p.sponsorship,
          memberLeft: p.member_left,
        },
        p.client_secret,
        p.webhook ? SANDBOX_WEBHOOK_SECRET : undefined,
        p.suspended,
      );
    }
    const users = context.get(UsersService);
    await users.seedAll(
      SANDBOX_MEMBERS.map((m) => ({
        userId: m.user_id,
        email: m.email,
        name: m.name,
        password: SANDBOX_PASSWORD,
      })),
    );
    logger.info(
      { partners: SANDBOX_PARTNERS.length, members: SANDBOX_MEMBERS.length },
      'auth-server: sandbox seeded',
    );
  });
}
