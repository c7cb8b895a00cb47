import {
  AMQP_CONFIG,
  BASE_CONFIG,
  DATABASE_CONFIG,
  duration,
  durationList,
  int,
  parseHostPorts,
  REDIS_CONFIG,
  type ConfigOf,
} from '@svc/platform';
import { API_LIMITS } from '@svc/contracts';
import { FAILED_AUTH_CONFIG, RATE_LIMIT_CONFIG } from '@svc/security';
import { isIP } from 'node:net';

/** `ip:port,…` ([v6]:port for IPv6) as node:dns's setServers takes them; unset, the system's servers. */
function dnsServers(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  return parseHostPorts(raw).map(({ host, port }) => {
    if (isIP(host) === 0) throw new Error(`"${host}" is not an IP address`);
    return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
  });
}

export const WEBHOOK_DISPATCHER_CONFIG = {
  ...BASE_CONFIG,
  ...DATABASE_CONFIG,
  ...AMQP_CONFIG,
  // The partners' webhook routes (/v1/partners/webhooks/*): Basic credentials and the shared limits.
  ...REDIS_CONFIG,
  ...RATE_LIMIT_CONFIG,
  ...FAILED_AUTH_CONFIG,
  WEBHOOK_RETRY_SCHEDULE: durationList(
    'delays between a failed attempt and the next (docs/rules.md, Webhooks), e.g. 1m,5m,30m,2h,6h',
    { default: '1m,5m,30m,2h,6h' },
  ),
  WEBHOOK_TIMEOUT_MS: int('budget of one delivery attempt: connect, headers and body', {
    default: '5000',
    min: 100,
    max: 60_000,
  }),
  WEBHOOK_GIVE_UP_AFTER: duration('no attempt later than this after the first', { default: '24h' }),
  WEBHOOK_CONCURRENCY: int(
    'events and attempts each consumer works on at once (a packed message counts as its events): concurrent deliveries, and how many share one database write',
    { default: '400', min: 1, max: 1000 },
  ),
  WEBHOOK_PARTNER_CONCURRENCY: int(
    'most attempts of one partner this process runs at once (its slots): a partner whose endpoint hangs holds no more of the shared permits; its attempts beyond wait in the backlog (the delivery rows), where every partner gets its turn',
    { default: '64', min: 1, max: 1000 },
  ),
  WEBHOOK_DNS_LOOKUPS_PER_PARTNER: int(
    'most name lookups of one partner’s webhook host this process has in flight; further attempts of that partner wait for one (inside their budget)',
    { default: '4', min: 1, max: 64 },
  ),
  WEBHOOK_DNS_SERVERS: {
    description:
      'name servers for webhook hosts, ip:port comma-separated ([v6]:port for IPv6); unset: the system’s (/etc/resolv.conf)',
    parse: dnsServers,
  },
  WEBHOOK_CONNECTIONS_PER_TARGET: int(
    'most connections open to one partner endpoint at once; further attempts wait for one (inside their budget)',
    { default: '64', min: 1, max: 1000 },
  ),
  WEBHOOK_LOG_RETENTION_DAYS: int(
    'days a finished delivery (delivered or given up) stays in the delivery log before it is pruned; 0 keeps them all',
    { default: '30', min: 0, max: 3650 },
  ),
  PORTAL_ACTIONS_RETENTION_DAYS: int(
    'days the record of a partner portal action (webhooks.portal_actions: redeliver, replay, enable, test, and what each got) is kept before it is pruned; at least a day, the longest window any budget counts',
    { default: '30', min: 1, max: 3650 },
  ),
  WEBHOOK_DISABLE_AFTER: duration(
    'a partner endpoint whose every attempt has failed for this long is disabled: new events are recorded as skipped until the partner re-enables it',
    { default: '5d' },
  ),
  WEBHOOK_REPLAYS_PER_HOUR: int(
    'replay calls (POST /v1/partners/webhooks/replay) one partner may make per rolling hour; beyond them, 429',
    { default: String(API_LIMITS.webhookReplaysPerHour), min: 1, max: 10_000 },
  ),
  WEBHOOK_REDELIVERIES_PER_HOUR: int(
    'redeliveries (POST /v1/partners/webhooks/deliveries/{id}/redeliver) one partner may ask for per rolling hour; beyond them, 429',
    { default: String(API_LIMITS.webhookRedeliveriesPerHour), min: 1, max: 100_000 },
  ),
  WEBHOOK_ENDPOINT_CHECKS_PER_HOUR: int(
    'endpoint tests one partner may make per rolling hour: enabling (POST /v1/partners/webhooks/endpoint/enable, or the portal) and the portal’s test events, together; beyond them, 429',
    { default: String(API_LIMITS.webhookEndpointChecksPerHour), min: 1, max: 10_000 },
  ),
  WEBHOOK_RECIPIENT_CACHE_TTL: duration(
    'how long an attempt may reuse auth-server’s answer (URL, secrets, consent) instead of asking again; 0s: always ask',
    { default: '5s' },
  ),
};

export type WebhookDispatcherConfig = ConfigOf<typeof WEBHOOK_DISPATCHER_CONFIG>;
