import { Injectable } from '@nestjs/common';
import type { MemberSponsorship } from '@svc/contracts';
import { SeatsRepository } from '../seats/seats.repository';

/**
 * What a crew member sees of their sponsorships on their account page: every partner whose seat
 * ever gave them premium, with when it started and when it ended (or ends). Closed seats stay
 * listed, so a partner that provisioned the member's address and removed it at once is seen too.
 */
@Injectable()
export class MemberSponsorshipsService {
  constructor(private readonly seats: SeatsRepository) {}

  async of(userId: string): Promise<MemberSponsorship[]> {
    const rows = await this.seats.ofMember(userId);
    return rows.map((r) => ({
      client_id: r.clientId,
      partner_name: r.partnerName ?? r.clientId,
      status: r.status,
      since: r.activatedAt.toISOString(),
      until: r.until.toISOString(),
    }));
  }
}
