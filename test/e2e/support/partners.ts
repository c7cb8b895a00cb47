import { randomBytes } from 'node:crypto';
import { basicAuthorization } from '../../support/factories';
import type { RunningSystem } from '../../support/system';
import type { WebhookReceiver } from '../../support/webhook-receiver';
import type { OAuthClient } from './scale-client';

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
