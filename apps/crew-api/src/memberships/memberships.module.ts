import { Module } from '@nestjs/common';
import { RecordsModule } from '../records/records.module';
import { MembershipsHandler } from './memberships.handler';
import { MembershipsRepository } from './memberships.repository';
import { MembershipsService } from './memberships.service';

/** Entitlements for sponsorship-api, over RPC on crew-api's queue. */
@Module({
  imports: [RecordsModule],
  controllers: [MembershipsHandler],
  providers: [MembershipsRepository, MembershipsService],
})
export class MembershipsModule {}
