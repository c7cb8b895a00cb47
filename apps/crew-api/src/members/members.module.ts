import { Module } from '@nestjs/common';
import { OutboxRepository } from '@svc/platform';
import { RecordsModule } from '../records/records.module';
import { InternalMembersController } from './internal-members.controller';
import { MeController } from './me.controller';
import { MemberRegistrationService } from './member-registration.service';
import { MembersRepository } from './members.repository';
import { MembersService } from './members.service';

@Module({
  imports: [RecordsModule],
  controllers: [MeController, InternalMembersController],
  providers: [MembersRepository, MembersService, MemberRegistrationService, OutboxRepository],
})
export class MembersModule {}
