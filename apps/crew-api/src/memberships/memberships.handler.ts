import { Controller } from '@nestjs/common';
import { MessagePattern, Payload, RpcException } from '@nestjs/microservices';
import {
  CREW_MEMBERS_BY_EMAIL,
  CREW_MEMBERSHIP_DROP,
  CREW_MEMBERSHIP_GRANT,
  type MembersByEmailResponse,
  type MembershipDropResponse,
  type MembershipGrantResponse,
} from '@svc/contracts';
import { answerRpc } from '@svc/platform';
import { RecordsException } from '../records/records.exception';
import { MembershipsService } from './memberships.service';

/** A member the caller named does not exist: an answer it acts on, not a failure. */
async function answerMembershipRpc<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await answerRpc(work);
  } catch (err) {
    if (err instanceof RecordsException && err.code === 'member_not_found') {
      throw new RpcException({ error: 'member_not_found', message: err.message });
    }
    throw err;
  }
}

/** sponsorship-api's entitlement calls (libs/contracts rpc/crew/membership). */
@Controller()
export class MembershipsHandler {
  constructor(private readonly memberships: MembershipsService) {}

  @MessagePattern(CREW_MEMBERS_BY_EMAIL.pattern)
  byEmail(@Payload() payload: unknown): Promise<MembersByEmailResponse> {
    return answerMembershipRpc(() =>
      this.memberships.findByEmails(CREW_MEMBERS_BY_EMAIL.parseRequest(payload).emails),
    );
  }

  @MessagePattern(CREW_MEMBERSHIP_GRANT.pattern)
  grant(@Payload() payload: unknown): Promise<MembershipGrantResponse> {
    return answerMembershipRpc(() => this.memberships.grant(CREW_MEMBERSHIP_GRANT.parseRequest(payload)));
  }

  @MessagePattern(CREW_MEMBERSHIP_DROP.pattern)
  drop(@Payload() payload: unknown): Promise<MembershipDropResponse> {
    return answerMembershipRpc(() => this.memberships.drop(CREW_MEMBERSHIP_DROP.parseRequest(payload)));
  }
}
