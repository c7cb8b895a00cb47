import { Inject, Injectable } from '@nestjs/common';
import {
  AUTH_PORTAL_LINK_PEEK,
  AUTH_PORTAL_LINK_REDEEM,
  AUTH_PORTAL_STANDING,
  SPONSORSHIP_PORTAL_SEATS,
  WEBHOOKS_PORTAL_ACTION,
  WEBHOOKS_PORTAL_DELIVERIES,
  WEBHOOKS_PORTAL_DELIVERY,
  WEBHOOKS_PORTAL_OVERVIEW,
  type PartnerDeliveryDetailResponse,
  type PartnerDeliveryPageResponse,
  type PortalAnswer,
  type PortalEndpointOverview,
  type PortalPartner,
  type PortalSeatsResult,
  type PortalWebhookAction,
  type PortalWebhookActionResult,
} from '@svc/contracts';
import { newId, RpcClient, sha256Hex } from '@svc/platform';
import { RateLimiter, type RateLimitDecision } from '@svc/security';
import { isRandomToken } from '../sessions/secrets';
import { COOKIE_POLICY, type CookiePolicy } from '../sessions/session-cookies';
import { CLOCK, SessionStore, type Clock, type Session } from '../sessions/session-store';
import { SessionsRepository } from '../sessions/sessions.repository';
import { portalSessionKind, type PortalSessionData } from './portal-cookies';

/** A live portal session, as the pages see it. */
export type PortalSession = Session<PortalSessionData>;

/**
 * What a link's page offers: the partner it opens, and the other partner whose portal session
 * this browser has open (which opening the link would end), if any.
 */
export interface LinkOffer {
  readonly outcome: 'offer';
  /** The link's token, for the page's form. */
  readonly token: string;
  readonly partner: PortalPartner;
  readonly signedInAs?: PortalSession;
}

export type OpenOutcome =
  | {
      readonly outcome: 'opened';
      readonly cookies: readonly string[];
      readonly frameOrigins: readonly string[];
    }
  | LinkOffer
  | { readonly outcome: 'expired' };

const EXPIRED = { outcome: 'expired' } as const;

/** The query parameters each list takes (the API's own names); anything else is dropped. */
export const DELIVERY_QUERY = ['status', 'event_type', 'since', 'until', 'limit', 'cursor'] as const;
export const SEAT_QUERY = ['status', 'limit', 'cursor'] as const;
const REPLAY_FIELDS = ['since', 'until', 'status'] as const;
/**
 * How long an action may take over RPC. A test (or enable) waits for the partner's endpoint,
 * which has the webhook budget (5 s) to answer; a redelivery or replay waits its turn on the
 * partner's budget lock. An answer that comes after the page gave up would read as "nothing
 * happened" while it did, so the page waits longer than for a read.
 */
const ACTION_TIMEOUT_MS = 8_000;

/**
 * The partner portal: a single-use link becomes a portal session (an hour at most) for that
 * partner alone; every read and action asks the app that owns the data over RPC, bound to the
 * session's client_id. Nothing from the page ever names the partner.
 */
@Injectable()
export class PortalService {
  private readonly sessions: SessionStore<PortalSessionData>;

  constructor(
    private readonly rpc: RpcClient,
    rows: SessionsRepository,
    private readonly limiter: RateLimiter,
    @Inject(COOKIE_POLICY) policy: CookiePolicy,
    @Inject(CLOCK) clock: Clock,
  ) {
    this.sessions = new SessionStore(portalSessionKind(policy), rows, clock);
  }

  /**
   * What visiting a link shows, spending nothing (a chat preview or a mail scanner fetches links
   * too): whose portal it opens, and whose session it would end.
   */
  async offer(token: unknown, cookieHeader: string | undefined): Promise<LinkOffer | typeof EXPIRED> {
    if (!isRandomToken(token)) return EXPIRED;
    return this.offerFor(token, await this.resolve(cookieHeader));
  }

  /**
   * The link page's form: spends the link (auth-server says whose it is, once, within 5 minutes)
   * and starts a fresh portal session; the session the browser already had ends (no fixation).
   * Another partner's session ends only when the form carries that session's CSRF token, which
   * only the page that asked "continue as …?" in this browser has: a link sent by someone else,
   * or a form on another site, cannot replace it unasked.
   */
  async open(token: unknown, csrf: unknown, cookieHeader: string | undefined): Promise<OpenOutcome> {
    if (!isRandomToken(token)) return EXPIRED;
    const current = await this.resolve(cookieHeader);
    if (current && !this.csrfMatches(current, csrf)) {
      const offer = await this.offerFor(token, current);
      if (offer.outcome === 'expired' || offer.signedInAs) return offer;
    }
    const answer = await this.rpc.call(AUTH_PORTAL_LINK_REDEEM, { token_digest: sha256Hex(token) });
    if (!answer.valid) return EXPIRED;
    const { cookie } = await this.sessions.start(cookieHeader, {
      ref: newId('pps', 16),
      clientId: answer.partner.client_id,
      partnerName: answer.partner.name,
      sponsorship: answer.partner.sponsorship,
      frameOrigins: answer.partner.frame_origins,
    });
    return { outcome: 'opened', cookies: [cookie], frameOrigins: answer.partner.frame_origins };
  }

  private async offerFor(
    token: string,
    current: PortalSession | undefined,
  ): Promise<LinkOffer | typeof EXPIRED> {
    const answer = await this.rpc.call(AUTH_PORTAL_LINK_PEEK, { token_digest: sha256Hex(token) });
    if (!answer.valid) return EXPIRED;
    return current && current.clientId !== answer.partner.client_id
      ? { outcome: 'offer', token, partner: answer.partner, signedInAs: current }
      : { outcome: 'offer', token, partner: answer.partner };
  }

  /**
   * The live portal session the request's cookie names, if any. A partner suspended since the
   * session began loses it here, at its next page (auth-server is asked on every page).
   */
  resolve(cookieHeader: string | undefined): Promise<PortalSession | undefined> {
    return this.sessions.resolve(cookieHeader, async ({ clientId }) => {
      const { active } = await this.rpc.call(AUTH_PORTAL_STANDING, { client_id: clientId });
      return active;
    });
  }

  /**
   * One page or action of the portal session, counted in its partner's API windows (per minute
   * and per day, the keys `RateLimitGuard` counts `/v1/*` in): the portal is another door to the
   * same budget. A refused one is not counted, as in the API.
   */
  spend(session: PortalSession): Promise<RateLimitDecision> {
    return this.limiter.consume(session.clientId);
  }

  csrfMatches(session: PortalSession, presented: unknown): boolean {
    return this.sessions.csrfMatches(session, presented);
  }

  async signOut(cookieHeader: string | undefined): Promise<string[]> {
    return [await this.sessions.end(cookieHeader)];
  }

  overview(session: PortalSession): Promise<PortalAnswer<PortalEndpointOverview>> {
    return this.rpc.call(WEBHOOKS_PORTAL_OVERVIEW, { client_id: session.clientId });
  }

  deliveries(session: PortalSession, query: unknown): Promise<PortalAnswer<PartnerDeliveryPageResponse>> {
    return this.rpc.call(WEBHOOKS_PORTAL_DELIVERIES, {
      client_id: session.clientId,
      query: pick(query, DELIVERY_QUERY),
    });
  }

  delivery(session: PortalSession, deliveryId: string): Promise<PortalAnswer<PartnerDeliveryDetailResponse>> {
    return this.rpc.call(WEBHOOKS_PORTAL_DELIVERY, {
      client_id: session.clientId,
      delivery_id: deliveryId.slice(0, 200),
    });
  }

  seats(session: PortalSession, query: unknown): Promise<PortalAnswer<PortalSeatsResult>> {
    return this.rpc.call(SPONSORSHIP_PORTAL_SEATS, {
      client_id: session.clientId,
      partner_name: session.partnerName.slice(0, 500),
      query: pick(query, SEAT_QUERY),
    });
  }

  /** One action, recorded by webhook-dispatcher with this session's reference. */
  act(
    session: PortalSession,
    action: PortalWebhookAction,
    subject: { readonly deliveryId?: string; readonly form?: unknown } = {},
  ): Promise<PortalAnswer<PortalWebhookActionResult>> {
    return this.rpc.call(
      WEBHOOKS_PORTAL_ACTION,
      {
        client_id: session.clientId,
        portal_session: session.ref,
        action,
        ...(subject.deliveryId !== undefined ? { delivery_id: subject.deliveryId.slice(0, 200) } : {}),
        ...(action === 'replay' ? { window: pick(subject.form, REPLAY_FIELDS) } : {}),
      },
      ACTION_TIMEOUT_MS,
    );
  }
}

/**
 * The named fields that hold a non-empty string (a form's "any" is empty), at most 500
 * characters each: the API's parser then judges them as it judges a partner's request.
 */
export function pick(input: unknown, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof input !== 'object' || input === null) return out;
  const record = input as Record<string, unknown>;
  for (const name of names) {
    const value = record[name];
    if (typeof value === 'string' && value.trim() !== '') out[name] = value.trim().slice(0, 500);
  }
  return out;
}
