import { Injectable } from '@nestjs/common';
import { CREW_EVENTS_EXCHANGE, MEMBER_REGISTERED, type MemberRegisteredEvent } from '@svc/contracts';
import { newId, OutboxRepository, TransactionRunner } from '@svc/platform';
import { RecordsException } from '../records/records.exception';
import { toMemberProfileResponse, type MemberProfileResponse } from './dto/member-profile.response';
import type { MemberRegistration } from './dto/member-registration.dto';
import { MembersRepository } from './members.repository';

@Injectable()
export class MemberRegistrationService {
  constructor(
    private readonly members: MembersRepository,
    private readonly transactions: TransactionRunner,
    private readonly outbox: OutboxRepository,
  ) {}

  /** A sign-up: record, free membership and `crew.member.registered` (seats activate on it) in one transaction. */
  register(registration: MemberRegistration): Promise<MemberProfileResponse> {
    const userId = registration.userId ?? newId('usr');
    return this.transactions.run(async (tx) => {
      const inserted = await this.members.insertMember(tx, { ...registration, userId });
      if (!inserted) {
        throw new RecordsException(
          'member_exists',
          'A crew member with this user id or e-mail exists already.',
        );
      }
      const member = toMemberProfileResponse(inserted);
      const event: MemberRegisteredEvent = {
        id: newId('evt'),
        type: MEMBER_REGISTERED,
        user_id: userId,
        email: member.email,
        name: member.name,
        created_at: member.record_updated_at,
      };
      await this.outbox.addEvent(tx, CREW_EVENTS_EXCHANGE, event);
      return member;
    });
  }
}
