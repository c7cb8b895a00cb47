'use strict';
// Partners for the benches, onboarded the way operators do it: auth-server's `partners create` CLI.
const { execFileSync } = require('node:child_process');
const apps = require('../lib/apps.cjs');

/**
 * Creates partner `clientId` with the given scopes (and the sponsorship program or a webhook URL
 * when asked); resolves its credentials { client_id, client_secret }.
 */
function onboardPartner(env, clientId, { scopes = 'profile:read', sponsorship = false, webhookUrl } = {}) {
  const out = execFileSync(
    process.execPath,
    [
      apps.cliJs('auth-server'),
      'partners',
      'create',
      '--client-id',
      clientId,
      '--name',
      `Bench ${clientId}`,
      '--redirect-uri',
      'http://localhost:8765/callback',
      '--scopes',
      scopes,
      ...(sponsorship ? ['--sponsorship'] : []),
      ...(webhookUrl ? ['--webhook-url', webhookUrl] : []),
    ],
    { env: { ...env, LOG_LEVEL: 'warn' }, encoding: 'utf8' },
  );
  const secret = /client_secret\s+(\S+)/.exec(out);
  if (!secret) throw new Error(`partners create printed no client_secret for ${clientId}`);
  return { client_id: clientId, client_secret: secret[1] };
}

module.exports = { onboardPartner };
