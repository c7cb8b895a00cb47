import { Module } from '@nestjs/common';
import { MembersRepository } from '../members/members.repository';
import { MemberExportHandler } from './member-export.handler';
import { MemberExportRepository } from './member-export.repository';
import { MemberExportService } from './member-export.service';

/** The member's data export, over RPC on crew-api's queue. */
@Module({
  controllers: [MemberExportHandler],
  providers: [MembersRepository, MemberExportRepository, MemberExportService],
})
export class MemberExportModule {}
