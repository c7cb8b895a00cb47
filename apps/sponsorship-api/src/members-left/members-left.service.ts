import type { MemberLeftResponse } from '@svc/contracts';
import { Injectable } from '@nestjs/common';
import { TransactionRunner } from '@svc/platform';
import type { PartnerPrincipal } from '@svc/security';
import { EntitlementsClient } from '../entitlements/entitlements.client';
import { SeatsException } from '../seats/seats.exception';
import { SeatsRepository, type SeatRow } from '../seats/seats.repository';
import type { MemberLeft } from './dto/member-left.dto';

/**
 * Member-left: closes the member's billed seat of the partner, locked first (of concurrent calls one
 * closes it, the others get `ended: false`); premium drops in the same transaction (else 503).
 */
@Injectable()
export class MembersLeftService {
  constructor(
    private readonly seats: SeatsRepository,
    private readonly transactions: TransactionRunner,
    private readonly entitlements: EntitlementsClient,
  ) {}

  memberLeft(partner: PartnerPrincipal, request: MemberLeft): Promise<MemberLeftResponse> {
    const clientId = partner.client_id;
    if (request.userId === null && request.externalRef === null) throw notIdentified();
    return this.transactions.run(async (tx) => {
      let seat: SeatRow | null;
      let userId: string;
      if (request.userId !== null) {
        userId = request.userId;
        seat = await this.seats.lockActiveOf(tx, clientId, { userId });
      } else {
        const externalRef = request.externalRef as string;
        seat = await this.seats.lockActiveOf(tx, clientId, { externalRef });
        const known = seat ?? (await this.seats.latestByRef(tx, clientId, externalRef));
        if (!known?.userId) throw notIdentified();
        userId = known.userId;
      }
      if (!seat) return { user_id: userId, ended: false, downgraded: false };
      const downgraded = await this.entitlements.dropSeats([seat]);
      await this.seats.close(tx, [seat], 'ended', clientId, `member_left:${request.reason ?? 'unspecified'}`);
      return { user_id: userId, ended: true, downgraded: downgraded.has(seat.sponsorshipId) };
    });
  }
}

function notIdentified(): SeatsException {
  return new SeatsException(
    'member_not_identified',
    'Name the member: give their user_id, or the external_ref of a seat of yours that a crew member holds.',
  );
}
