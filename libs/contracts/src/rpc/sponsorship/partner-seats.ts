import { API_LIMITS } from '../../limits';
import type { SeatPageResponse } from '../../responses';
import { fieldsContract, readStringMap, text } from '../../validate';
import { portalAnswer, readObject } from '../portal-answer';
import { RPC_QUEUES } from '../rpc';

/** The seats of one status, as the partner's program counts them. */
export interface PortalSeatCounts {
  readonly invited: number;
  readonly active: number;
  readonly ended: number;
  readonly cancelled: number;
}

export interface PortalSeatsResult {
  /** One page of the seat list, exactly as `GET /v1/partners/sponsorships` answers it. */
  readonly page: SeatPageResponse;
  readonly counts: PortalSeatCounts;
  /** Live seats (`invited` + `active`), which the quota counts. */
  readonly live: number;
  /** The partner's seat quota (its own, or the service's default). */
  readonly cap: number;
}

const REQUEST = {
  client_id: text(API_LIMITS.idMaxLength),
  /** The partner's name, as sponsorship-api keeps it for its sponsors. */
  partner_name: text(500),
  /** The seat list's query parameters (`status`, `limit`, `cursor`) as the page's form sent them. */
  query: readStringMap,
};

/**
 * `sponsorship.portal.seats`: the partner portal's seats page (consent-ui), bound to the portal
 * session's partner, answered by the same list rules as the API plus the program's counts and cap.
 * Asked by consent-ui alone, which takes `client_id` and `partner_name` from its own portal session
 * (written when auth-server redeemed the link), never from the page.
 */
export const SPONSORSHIP_PORTAL_SEATS = fieldsContract(
  RPC_QUEUES.sponsorshipApi,
  'sponsorship.portal.seats',
  ['consent-ui'],
  REQUEST,
  portalAnswer(readObject<PortalSeatsResult>),
);
