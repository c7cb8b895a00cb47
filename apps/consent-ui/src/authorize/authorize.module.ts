import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/sessions.module';
import { AuthorizeController } from './authorize.controller';
import { AuthorizeService } from './authorize.service';

@Module({ imports: [SessionsModule], controllers: [AuthorizeController], providers: [AuthorizeService] })
export class AuthorizeModule {}
