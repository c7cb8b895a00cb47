import { Inject, Injectable } from '@nestjs/common';
import type { PortalLinkRedeemResponse, PortalSessionResponse } from '@svc/contracts';
import { APP_CONFIG, newSecret, sha256Hex } from '@svc/platform';
import type { PartnerPrincipal } from '@svc/security';
import { PartnersService } from '../partners/partners.service';
import { PortalLinksRepository } from './portal-links.repository';

/** How long a link may wait for its one visit (issue 41: within 5 minutes). */
export const PORTAL_LINK_TTL_MS = 5 * 60_000;
/** The path consent-ui opens a link at. */
export const PORTAL_OPEN_PATH = '/portal/open';

/**
 * Single-use links to the partner portal. A link is a bearer credential for one partner's portal,
 * so it is treated like a token: 256 random bits, only its SHA-256 stored, spent on first use.
 */
@Injectable()
export class PortalLinksService {
  constructor(
    private readonly links: PortalLinksRepository,
    private readonly partners: PartnersService,
    @Inject(APP_CONFIG) private readonly config: { readonly PUBLIC_BASE_URL: string },
  ) {}

  async create(partner: PartnerPrincipal): Promise<PortalSessionResponse> {
    const token = newSecret();
    const expiresAt = new Date(Date.now() + PORTAL_LINK_TTL_MS);
    await this.links.insert(sha256Hex(token), partner.client_id, expiresAt);
    // The token is base64url: nothing in it needs escaping in a query.
    const url = `${this.config.PUBLIC_BASE_URL.replace(/\/+$/, '')}${PORTAL_OPEN_PATH}?token=${token}`;
    return { url, expires_at: expiresAt.toISOString() };
  }

  /**
   * Spends the link and says whose portal it opens. A partner suspended since the link was made
   * gets no portal (the link is spent all the same).
   */
  async redeem(tokenDigest: string): Promise<PortalLinkRedeemResponse> {
    return this.portalOf(await this.links.spend(tokenDigest));
  }

  /**
   * Whose portal the link would open, the same answer as `redeem`, with the link left unspent:
   * visiting it (a GET, as link previews make) spends nothing.
   */
  async peek(tokenDigest: string): Promise<PortalLinkRedeemResponse> {
    return this.portalOf(await this.links.findUnspent(tokenDigest));
  }

  private async portalOf(clientId: string | undefined): Promise<PortalLinkRedeemResponse> {
    if (clientId === undefined) return { valid: false };
    const partner = await this.partners.findById(clientId);
    if (!partner || partner.suspended) return { valid: false };
    return {
      valid: true,
      partner: {
        client_id: partner.clientId,
        name: partner.name,
        sponsorship: partner.sponsorship,
        frame_origins: partner.frameOrigins,
      },
    };
  }

  /** Whether the partner's open portal session may go on: it exists and is not suspended. */
  async standing(clientId: string): Promise<{ active: boolean }> {
    const partner = await this.partners.findById(clientId);
    return { active: partner !== null && !partner.suspended };
  }
}
