import { parseArgs } from 'node:util';
import type { INestApplicationContext } from '@nestjs/common';
import { SIGNING_KEY_OVERLAP_DAYS } from '@svc/contracts';
import { printLine as out, runSubcommands, UsageError, type ConfigOf } from '@svc/platform';
import type { Logger } from 'pino';
import type { AUTH_SERVER_CONFIG } from '../config';
import { withCoreContext } from '../core-context';
import { TokensService } from '../tokens/tokens.service';
import { PartnerRegistrationError, PartnersService } from './partners.service';

const USAGE = `Partner onboarding (operators only; partners cannot register themselves).

  partners create --client-id ID --name NAME --redirect-uri URI [--redirect-uri URI ...]
                  --scopes "profile:read seatime:read vessels:read" [--webhook-url URL]
                  [--sponsorship] [--member-left]
  partners list
  partners set-webhook-url CLIENT_ID URL        (https to a public address; sandbox: also http to loopback)
  partners set-frame-origins CLIENT_ID ORIGIN [ORIGIN ...]
                                                (the only pages that may frame its portal, each
                                                 https://host[:port]; replaces the ones before)
  partners clear-frame-origins CLIENT_ID        (its portal may be framed by none)
  partners rotate-secret CLIENT_ID
  partners rotate-webhook-secret CLIENT_ID      (new secret signs alongside the current one)
  partners finish-webhook-rotation CLIENT_ID    (the new secret becomes the only one)
  partners rotate-signing-key CLIENT_ID         (a new Ed25519 key: the first, or the next; the one
                                                 it replaces signs alongside for ${SIGNING_KEY_OVERLAP_DAYS} days)
  partners suspend CLIENT_ID                    (ends every live token of the partner at once)
  partners unsuspend CLIENT_ID

New credentials are printed once and stored only as digests (client secret) or sealed
(webhook secret); copy them now. Signing keys' private halves are sealed and never printed.`;

/** `cli.js partners ...`, run through `npm run partners -- ...`. */
export async function partnersCommand(
  args: readonly string[],
  config: ConfigOf<typeof AUTH_SERVER_CONFIG>,
  logger: Logger,
): Promise<void> {
  await runSubcommands(
    'partners',
    USAGE,
    args,
    (command, rest) => withCoreContext(config, logger, (context) => run(context, command, rest)),
    (err) => (err instanceof PartnerRegistrationError ? 2 : undefined),
  );
}

async function run(context: INestApplicationContext, command: string, rest: readonly string[]) {
  const partners = context.get(PartnersService);
  const tokens = context.get(TokensService);
  const target = () => {
    const id = rest[0];
    if (!id) throw new UsageError('CLIENT_ID is required');
    return id;
  };
  switch (command) {
    case 'create': {
      const { values } = parseArgs({
        args: [...rest],
        options: {
          'client-id': { type: 'string' },
          name: { type: 'string' },
          'redirect-uri': { type: 'string', multiple: true },
          scopes: { type: 'string' },
          'webhook-url': { type: 'string' },
          sponsorship: { type: 'boolean', default: false },
          'member-left': { type: 'boolean', default: false },
        },
      });
      if (!values['client-id'] || !values.name || !values.scopes) {
        throw new UsageError('--client-id, --name and --scopes are required');
      }
      const credentials = await partners.register({
        clientId: values['client-id'],
        name: values.name,
        redirectUris: values['redirect-uri'] ?? [],
        scopes: values.scopes.split(/[\s,]+/).filter(Boolean),
        webhookUrl: values['webhook-url'],
        sponsorship: values.sponsorship ?? false,
        memberLeft: values['member-left'] ?? false,
      });
      out(`Partner ${values['client-id']} created. Shown once:`);
      out(`  client_id      ${values['client-id']}`);
      out(`  client_secret  ${credentials.clientSecret}`);
      if (credentials.webhookSecret) out(`  webhook_secret ${credentials.webhookSecret}`);
      return;
    }
    case 'list': {
      for (const p of await partners.list()) {
        const flags = [
          p.sponsorship && 'sponsorship',
          p.memberLeft && 'member-left',
          p.suspended && 'SUSPENDED',
        ];
        const row = [p.clientId, JSON.stringify(p.name), p.allowedScopes.join(' '), p.redirectUris.join(' ')];
        const framing = p.frameOrigins.join(' ') || '-';
        out([...row, p.webhookUrl ?? '-', framing, flags.filter(Boolean).join(',') || '-'].join('\t'));
      }
      return;
    }
    case 'set-webhook-url': {
      const url = rest[1];
      if (!url) throw new UsageError('CLIENT_ID and URL are required');
      const { webhookSecret } = await partners.setWebhookUrl(target(), url);
      out(`${target()}: webhooks now go to ${url}.`);
      if (webhookSecret) out(`  webhook_secret ${webhookSecret}   (new; shown once)`);
      return;
    }
    case 'set-frame-origins': {
      const origins = rest.slice(1);
      if (origins.length === 0) throw new UsageError('CLIENT_ID and at least one ORIGIN are required');
      const set = await partners.setFrameOrigins(target(), origins);
      out(`${target()}: its portal may be framed by ${set.join(' ')} only.`);
      return;
    }
    case 'clear-frame-origins':
      await partners.setFrameOrigins(target(), []);
      out(`${target()}: its portal may be framed by none.`);
      return;
    case 'rotate-secret':
      out(`New client_secret of ${target()} (the old one stops working now; shown once):`);
      out(`  ${await partners.rotateSecret(target())}`);
      return;
    case 'rotate-webhook-secret':
      out(
        `New webhook secret of ${target()} (deliveries carry both signatures until the rotation is finished; shown once):`,
      );
      out(`  ${await partners.rotateWebhookSecret(target())}`);
      return;
    case 'finish-webhook-rotation':
      await partners.finishWebhookRotation(target());
      out(`${target()}: deliveries are signed with the new webhook secret only.`);
      return;
    case 'rotate-signing-key': {
      const { data } = await partners.rotateSigningKey(target());
      out(`Ed25519 signing keys of ${target()} (deliveries carry a v1a signature of each):`);
      for (const k of data) out(`  ${k.id}  ${k.public_key}  expires ${k.expires_at ?? 'never'}`);
      return;
    }
    case 'suspend':
      out(
        `${target()} suspended; ${await tokens.setPartnerSuspended(target(), true)} live token(s) revoked.`,
      );
      return;
    case 'unsuspend':
      await tokens.setPartnerSuspended(target(), false);
      out(`${target()} reinstated.`);
      return;
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}
