import { Inject, Injectable } from '@nestjs/common';
import {
  AUTH_CONSENTS_LIST,
  AUTH_CONSENTS_REVOKE,
  AUTH_MEMBER_ACCESS,
  SPONSORSHIP_MEMBER_SPONSORSHIPS,
  type Connection,
  type MemberSponsorship,
} from '@svc/contracts';
import { APP_CONFIG, APP_LOGGER, RpcClient } from '@svc/platform';
import type { Logger } from 'pino';
import { isTemporarilyUnavailable } from '../errors';
import { exportHref } from '../export/export-link';
import { loginLocation } from '../login/return-to';
import { parseCookies } from '../sessions/cookies';
import { clearCookie, COOKIE_POLICY, flashCookie, type CookiePolicy } from '../sessions/session-cookies';
import { SessionsService } from '../sessions/sessions.service';
import {
  previousConnections,
  summarize,
  type AccessSummary,
  type PreviousConnection,
} from './access-summary';
import { ConnectionsException } from './connections.exception';

export const CONNECTIONS_PATH = '/account/connections';
const FLASH_COOKIE = 'svc_flash';
const MAX_FLASH_LENGTH = 300;
/** If sponsorship-api is slow or down, the page still shows the connections after this long. */
const SPONSORSHIPS_TIMEOUT_MS = 1500;

/** A connected partner as auth-server lists it, and when and how much it read the member's record. */
export type ConnectionItem = Connection & { readonly access: AccessSummary };

export type ConnectionsPage =
  | { readonly outcome: 'sign_in'; readonly location: string }
  | {
      readonly outcome: 'list';
      readonly connections: readonly ConnectionItem[];
      /** Disconnected partners whose history is still kept (13 months). */
      readonly previous: readonly PreviousConnection[];
      /** "Download my data": the export with this session's link token. */
      readonly exportHref: string;
      /** Partners that sponsor or sponsored the member; `unavailable` when they could not be read. */
      readonly sponsorships: readonly MemberSponsorship[] | 'unavailable';
      readonly csrfToken: string;
      /** The confirmation of the disconnect that led here, shown once. */
      readonly notice?: string;
      readonly cookies: readonly string[];
    };

/** The member's connected partners, and disconnecting one. */
@Injectable()
export class ConnectionsService {
  constructor(
    private readonly rpc: RpcClient,
    private readonly sessions: SessionsService,
    @Inject(COOKIE_POLICY) private readonly policy: CookiePolicy,
    @Inject(APP_CONFIG) private readonly config: { readonly RPC_TIMEOUT_MS: number },
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {}

  async list(cookieHeader: string | undefined): Promise<ConnectionsPage> {
    const session = await this.sessions.resolve(cookieHeader);
    if (!session) return { outcome: 'sign_in', location: loginLocation(CONNECTIONS_PATH) };
    const [{ connections }, access, sponsorships] = await Promise.all([
      this.rpc.call(AUTH_CONSENTS_LIST, { user_id: session.userId }),
      this.rpc.call(AUTH_MEMBER_ACCESS, { user_id: session.userId }),
      this.sponsorshipsOf(session.userId),
    ]);
    const now = Date.now();
    const notice = readNotice(parseCookies(cookieHeader).get(FLASH_COOKIE));
    return {
      outcome: 'list',
      connections: connections.map((c) => ({ ...c, access: summarize(access, c.client_id, c.scopes, now) })),
      previous: previousConnections(access, new Set(connections.map((c) => c.client_id)), now),
      exportHref: exportHref(session.csrfToken),
      sponsorships,
      csrfToken: session.csrfToken,
      notice,
      cookies: notice === undefined ? [] : [clearCookie(this.policy, FLASH_COOKIE, CONNECTIONS_PATH)],
    };
  }

  /** Asked of sponsorship-api (consent-ui never reads its schema). */
  private async sponsorshipsOf(userId: string): Promise<readonly MemberSponsorship[] | 'unavailable'> {
    try {
      const { sponsorships } = await this.rpc.call(
        SPONSORSHIP_MEMBER_SPONSORSHIPS,
        { user_id: userId },
        Math.min(this.config.RPC_TIMEOUT_MS, SPONSORSHIPS_TIMEOUT_MS),
      );
      return sponsorships;
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message },
        'sponsorships could not be read for the account page',
      );
      return 'unavailable';
    }
  }

  /** Revokes every token of the partner for this member; answers the confirmation's cookie. */
  async disconnect(cookieHeader: string | undefined, clientId: string, csrf: unknown): Promise<string[]> {
    const session = await this.sessions.requireForPost(cookieHeader, csrf);
    // The name comes from auth-server, not from the form, so the confirmation cannot be forged.
    const { connections } = await this.rpc.call(AUTH_CONSENTS_LIST, { user_id: session.userId });
    const name = connections.find((c) => c.client_id === clientId)?.client_name;
    try {
      await this.rpc.call(AUTH_CONSENTS_REVOKE, { user_id: session.userId, client_id: clientId });
    } catch (err) {
      throw isTemporarilyUnavailable(err) ? new ConnectionsException('disconnect_unavailable') : err;
    }
    const notice = `${name ?? 'That partner'} can no longer read your record.`;
    return [flashCookie(this.policy, FLASH_COOKIE, CONNECTIONS_PATH, notice.slice(0, MAX_FLASH_LENGTH))];
  }
}

function readNotice(cookie: string | undefined): string | undefined {
  if (!cookie) return undefined;
  try {
    const text = decodeURIComponent(cookie);
    return text.length > 0 && text.length <= MAX_FLASH_LENGTH ? text : undefined;
  } catch {
    return undefined;
  }
}
