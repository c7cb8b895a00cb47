import { API_LIMITS } from '../../limits';
import type { SeatPageResponse } from '../../responses';
import { fieldsContract, readStringMap, text } from '../../validate';
import { portalAnswer, readObject } from '../portal-answer';

export interface PortalSeatsResult {
  /** One page of the seat list, exactly as `GET /v1/partners/sponsorships` answers it. */
  readonly page: SeatPageResponse;
  /** The partner's seats of each status. */
  readonly counts: Readonly<Record<SeatPageResponse['items'][number]['status'], number>>;
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
 * `sponsorship.portal.seats`: the portal's seats page by the API's list rules, plus counts and cap;
 * consent-ui alone asks, with the partner of its own portal session, never the page's.
 */
export const SPONSORSHIP_PORTAL_SEATS = fieldsContract(
  'sponsorship.portal.seats',
  ['consent-ui'],
  REQUEST,
  portalAnswer(readObject<PortalSeatsResult>),
);
