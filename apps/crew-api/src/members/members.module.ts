import { Module } from '@nestjs/common';
import { RecordsModule } from '../records/records.module';
import { InternalMembersController } from './internal-members.controller';
import { MeController } from './me.controller';
import { MembersRepository } from './members.repository';
import { MembersService } from './members.service';

@Module({
  imports: [RecordsModule],
  controllers: [MeController, InternalMembersController],
  providers: [MembersRepository, MembersService],
})
export class MembersModule {}
