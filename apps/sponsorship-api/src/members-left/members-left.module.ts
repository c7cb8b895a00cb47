import { Module } from '@nestjs/common';
import { EntitlementsModule } from '../entitlements/entitlements.module';
import { SeatsModule } from '../seats/seats.module';
import { MembersLeftController } from './members-left.controller';
import { MembersLeftService } from './members-left.service';

@Module({
  imports: [SeatsModule, EntitlementsModule],
  controllers: [MembersLeftController],
  providers: [MembersLeftService],
})
export class MembersLeftModule {}
