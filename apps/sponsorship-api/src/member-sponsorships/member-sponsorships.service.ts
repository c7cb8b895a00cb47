import { Injectable } from '@nestjs/common';
import type { MemberSponsorship } from '@svc/contracts';
import { SeatsRepository } from '../seats/seats.repository';

/** Every partner whose seat ever gave the member premium, closed seats included, for their account page. */
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
