import { Inject, Injectable } from '@nestjs/common';
import {
  AUTH_MEMBER_ACCESS,
  CREW_MEMBER_EXPORT,
  SPONSORSHIP_MEMBER_SPONSORSHIPS,
  type MemberAccessResponse,
} from '@svc/contracts';
import { APP_LOGGER, constantTimeEqual, RpcClient } from '@svc/platform';
import type { Logger } from 'pino';
import { CONNECTIONS_PATH } from '../connections/connections.service';
import { loginLocation } from '../login/return-to';
import { SessionsService } from '../sessions/sessions.service';
import { exportToken } from './export-link';

/** What the browser said about where the request came from (Fetch Metadata), if anything. */
export interface ExportRequest {
  readonly cookieHeader: string | undefined;
  readonly token: unknown;
  /** `Sec-Fetch-Site`, absent in browsers that do not send Fetch Metadata. */
  readonly fetchSite: string | undefined;
}

/** Why a download was refused: each is answered with a page, never with the data. */
export type ExportRefusal =
  /** Started by another site, or by another origin of this site (Sec-Fetch-Site). */
  | 'cross_site'
  /** The link's token is missing or is not this session's. */
  | 'bad_token';

export type ExportOutcome =
  | { readonly outcome: 'sign_in'; readonly location: string }
  | { readonly outcome: 'refused'; readonly reason: ExportRefusal }
  | { readonly outcome: 'unavailable' }
  | { readonly outcome: 'download'; readonly filename: string; readonly body: MemberDataExport };

/** The file a member downloads: their record, consents, access history and sponsorships. */
export interface MemberDataExport {
  readonly exported_at: string;
  readonly profile: unknown;
  readonly sea_time: unknown;
  readonly vessels: unknown;
  readonly connections: readonly unknown[];
  readonly access_history: readonly unknown[];
  readonly sponsorships: readonly unknown[];
}

/**
 * A navigation the member started here (`same-origin`), or from the address bar or a bookmark
 * (`none`). SameSite=Lax sends the session cookie on a cross-site top-level GET, so the cookie
 * alone proves nothing about who started the download.
 */
const ALLOWED_FETCH_SITES = new Set(['same-origin', 'none']);

/** "Download my data" (GET /account/export). */
@Injectable()
export class ExportService {
  constructor(
    private readonly rpc: RpcClient,
    private readonly sessions: SessionsService,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {}

  async download(request: ExportRequest, now = new Date()): Promise<ExportOutcome> {
    const session = await this.sessions.resolve(request.cookieHeader);
    if (!session) return { outcome: 'sign_in', location: loginLocation(CONNECTIONS_PATH) };
    if (request.fetchSite !== undefined && !ALLOWED_FETCH_SITES.has(request.fetchSite)) {
      return { outcome: 'refused', reason: 'cross_site' };
    }
    if (!constantTimeEqual(exportToken(session.csrfToken), request.token)) {
      return { outcome: 'refused', reason: 'bad_token' };
    }
    const userId = session.userId;
    let parts;
    try {
      parts = await Promise.all([
        this.rpc.call(CREW_MEMBER_EXPORT, { user_id: userId }),
        this.rpc.call(AUTH_MEMBER_ACCESS, { user_id: userId }),
        this.rpc.call(SPONSORSHIP_MEMBER_SPONSORSHIPS, { user_id: userId }),
      ]);
    } catch (err) {
      // A partial file would look complete to the member: all of it or a page that says try again.
      this.logger.warn({ err: (err as Error).message }, 'data export could not be gathered');
      return { outcome: 'unavailable' };
    }
    const [record, access, { sponsorships }] = parts;
    return {
      outcome: 'download',
      filename: `crew-record-${now.toISOString().slice(0, 10)}.json`,
      body: {
        exported_at: now.toISOString(),
        profile: record.profile,
        sea_time: record.sea_time,
        vessels: record.vessels,
        connections: access.consents.map((c) => ({
          partner: c.client_name,
          client_id: c.client_id,
          scopes: c.scopes,
          granted_at: c.granted_at,
          revoked_at: c.revoked_at ?? null,
        })),
        access_history: accessHistory(access),
        sponsorships: sponsorships.map((s) => ({
          partner: s.partner_name,
          client_id: s.client_id,
          status: s.status,
          since: s.since,
          until: s.until,
        })),
      },
    };
  }
}

/** Every retained day of reads (13 months), with the partner's name. */
function accessHistory(access: MemberAccessResponse): unknown[] {
  const names = new Map(access.partners.map((p) => [p.client_id, p.client_name]));
  return access.reads.map((r) => ({
    partner: names.get(r.client_id) ?? r.client_id,
    client_id: r.client_id,
    day: r.day,
    scope: r.scope,
    reads: r.count,
    last_read_at: r.last_at,
  }));
}
