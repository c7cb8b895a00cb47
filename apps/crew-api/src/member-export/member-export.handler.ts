import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { CREW_MEMBER_EXPORT, type MemberRecordExport } from '@svc/contracts';
import { answerRecordsRpc } from '../records/records-rpc';
import { MemberExportService } from './member-export.service';

/** consent-ui's "Download my data": the signed-in member's own record. */
@Controller()
export class MemberExportHandler {
  constructor(private readonly exports: MemberExportService) {}

  @MessagePattern(CREW_MEMBER_EXPORT.pattern)
  export(@Payload() payload: unknown): Promise<MemberRecordExport> {
    return answerRecordsRpc(() => this.exports.export(CREW_MEMBER_EXPORT.parseRequest(payload).user_id));
  }
}
