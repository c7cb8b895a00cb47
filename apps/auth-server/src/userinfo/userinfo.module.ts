import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module';
import { UserinfoController } from './userinfo.controller';
import { UserinfoService } from './userinfo.service';

@Module({
  imports: [UsersModule],
  controllers: [UserinfoController],
  providers: [UserinfoService],
  exports: [UserinfoService],
})
export class UserinfoModule {}
