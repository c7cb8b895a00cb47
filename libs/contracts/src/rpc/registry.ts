import { AUTH_PING } from './auth-ping';
import { AUTH_ACCESS_READS_RECORD, AUTH_MEMBER_ACCESS } from './auth/access-history';
import { AUTH_AUTHORIZE_DECIDE, AUTH_AUTHORIZE_VALIDATE } from './auth/authorize';
import { AUTH_CONSENTS_CONNECTED } from './auth/connected-members';
import { AUTH_CONSENTS_LIST, AUTH_CONSENTS_REVOKE } from './auth/consents';
import { AUTH_INTROSPECT } from './auth/introspect';
import { AUTH_LOGIN } from './auth/login';
import { AUTH_PARTNER_VERIFY } from './auth/partner-credentials';
import { AUTH_PORTAL_LINK_PEEK, AUTH_PORTAL_LINK_REDEEM, AUTH_PORTAL_STANDING } from './auth/portal-links';
import { AUTH_WEBHOOK_RECIPIENTS_BATCH, AUTH_WEBHOOK_TARGET } from './auth/webhook-recipients';
import { AUTH_WEBHOOK_SIGNING_KEYS } from './auth/webhook-signing-keys';
import { CREW_MEMBER_EXPORT } from './crew/member-export';
import { CREW_MEMBERSHIP_DROP, CREW_MEMBERSHIP_GRANT, CREW_MEMBERS_BY_EMAIL } from './crew/membership';
import type { RpcCallers } from './rpc';
import { SPONSORSHIP_MEMBER_SPONSORSHIPS } from './sponsorship/member-sponsorships';
import { SPONSORSHIP_PORTAL_SEATS } from './sponsorship/partner-seats';
import {
  WEBHOOKS_PORTAL_ACTION,
  WEBHOOKS_PORTAL_DELIVERIES,
  WEBHOOKS_PORTAL_DELIVERY,
  WEBHOOKS_PORTAL_OVERVIEW,
} from './webhooks/partner-portal';

/**
 * Every RPC contract of the service. An app's RPC server answers a pattern only when it is here,
 * on the app's queue, and only to the contract's `callers` (libs/platform `RpcServer`): a
 * handler without a contract answers nobody.
 */
export const RPC_CONTRACTS: readonly RpcCallers[] = [
  AUTH_PING,
  AUTH_INTROSPECT,
  AUTH_LOGIN,
  AUTH_AUTHORIZE_VALIDATE,
  AUTH_AUTHORIZE_DECIDE,
  AUTH_CONSENTS_LIST,
  AUTH_CONSENTS_REVOKE,
  AUTH_CONSENTS_CONNECTED,
  AUTH_PARTNER_VERIFY,
  AUTH_WEBHOOK_TARGET,
  AUTH_WEBHOOK_RECIPIENTS_BATCH,
  AUTH_WEBHOOK_SIGNING_KEYS,
  AUTH_PORTAL_LINK_REDEEM,
  AUTH_PORTAL_LINK_PEEK,
  AUTH_PORTAL_STANDING,
  AUTH_ACCESS_READS_RECORD,
  AUTH_MEMBER_ACCESS,
  CREW_MEMBER_EXPORT,
  CREW_MEMBERS_BY_EMAIL,
  CREW_MEMBERSHIP_GRANT,
  CREW_MEMBERSHIP_DROP,
  SPONSORSHIP_MEMBER_SPONSORSHIPS,
  SPONSORSHIP_PORTAL_SEATS,
  WEBHOOKS_PORTAL_OVERVIEW,
  WEBHOOKS_PORTAL_DELIVERIES,
  WEBHOOKS_PORTAL_DELIVERY,
  WEBHOOKS_PORTAL_ACTION,
];
