import { Module } from '@nestjs/common';
import { AccessHistoryModule } from '../access-history/access-history.module';
import { UsersModule } from '../users/users.module';
import { UserinfoController } from './userinfo.controller';
import { UserinfoService } from './userinfo.service';

@Module({
  imports: [UsersModule, AccessHistoryModule],
  controllers: [UserinfoController],
  providers: [UserinfoService],
})
export class UserinfoModule {}
