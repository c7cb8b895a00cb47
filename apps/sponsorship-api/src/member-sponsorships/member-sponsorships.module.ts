import { Module } from '@nestjs/common';
import { SeatsModule } from '../seats/seats.module';
import { MemberSponsorshipsHandler } from './member-sponsorships.handler';
import { MemberSponsorshipsService } from './member-sponsorships.service';

/** The member's own view of their sponsorships, answered over RPC (`rpc.sponsorship-api`). */
@Module({
  imports: [SeatsModule],
  controllers: [MemberSponsorshipsHandler],
  providers: [MemberSponsorshipsService],
})
export class MemberSponsorshipsModule {}
