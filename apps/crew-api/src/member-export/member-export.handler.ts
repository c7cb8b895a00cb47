import { Controller } from '@nestjs/common';
import { MessagePattern, Payload, RpcException } from '@nestjs/microservices';
import { CREW_MEMBER_EXPORT, type MemberRecordExport } from '@svc/contracts';
import { answerRpc } from '@svc/platform';
import { RecordsException } from '../records/records.exception';
import { MemberExportService } from './member-export.service';

/** consent-ui's "Download my data": the signed-in member's own record. */
@Controller()
export class MemberExportHandler {
  constructor(private readonly exports: MemberExportService) {}

  @MessagePattern(CREW_MEMBER_EXPORT.pattern)
  async export(@Payload() payload: unknown): Promise<MemberRecordExport> {
    try {
      return await answerRpc(() => this.exports.export(CREW_MEMBER_EXPORT.parseRequest(payload).user_id));
    } catch (err) {
      if (err instanceof RecordsException && err.code === 'member_not_found') {
        throw new RpcException({ error: 'member_not_found', message: err.message });
      }
      throw err;
    }
  }
}
