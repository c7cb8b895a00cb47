import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { answerRpc } from '@svc/platform';
import { AUTH_ACCESS_READS_RECORD, AUTH_MEMBER_ACCESS, type MemberAccessResponse } from '@svc/contracts';
import { AccessHistoryService } from './access-history.service';

/** crew-api's counts of reads, and consent-ui's pages of a member's own history. */
@Controller()
export class AccessHistoryHandler {
  constructor(private readonly history: AccessHistoryService) {}

  @MessagePattern(AUTH_ACCESS_READS_RECORD.pattern)
  record(@Payload() payload: unknown): Promise<{ recorded: number }> {
    return answerRpc(async () => ({
      recorded: await this.history.record(AUTH_ACCESS_READS_RECORD.parseRequest(payload).counts),
    }));
  }

  @MessagePattern(AUTH_MEMBER_ACCESS.pattern)
  memberAccess(@Payload() payload: unknown): Promise<MemberAccessResponse> {
    return answerRpc(() => this.history.memberAccess(AUTH_MEMBER_ACCESS.parseRequest(payload).user_id));
  }
}
