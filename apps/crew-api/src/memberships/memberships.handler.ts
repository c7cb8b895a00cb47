import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  CREW_MEMBERS_BY_EMAIL,
  CREW_MEMBERSHIP_DROP,
  CREW_MEMBERSHIP_GRANT,
  type MembersByEmailResponse,
  type MembershipDropResponse,
  type MembershipGrantResponse,
} from '@svc/contracts';
import { answerRecordsRpc } from '../records/records-rpc';
import { MembershipsService } from './memberships.service';

/** sponsorship-api's entitlement calls (libs/contracts rpc/crew/membership). */
@Controller()
export class MembershipsHandler {
  constructor(private readonly memberships: MembershipsService) {}

  @MessagePattern(CREW_MEMBERS_BY_EMAIL.pattern)
  byEmail(@Payload() payload: unknown): Promise<MembersByEmailResponse> {
    return answerRecordsRpc(() =>
      this.memberships.findByEmails(CREW_MEMBERS_BY_EMAIL.parseRequest(payload).emails),
    );
  }

  @MessagePattern(CREW_MEMBERSHIP_GRANT.pattern)
  grant(@Payload() payload: unknown): Promise<MembershipGrantResponse> {
    return answerRecordsRpc(() => this.memberships.grant(CREW_MEMBERSHIP_GRANT.parseRequest(payload)));
  }

  @MessagePattern(CREW_MEMBERSHIP_DROP.pattern)
  drop(@Payload() payload: unknown): Promise<MembershipDropResponse> {
    return answerRecordsRpc(() => this.memberships.drop(CREW_MEMBERSHIP_DROP.parseRequest(payload)));
  }
}
