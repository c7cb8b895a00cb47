import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/sessions.module';
import { LoginController } from './login.controller';
import { LoginService } from './login.service';

@Module({ imports: [SessionsModule], controllers: [LoginController], providers: [LoginService] })
export class LoginModule {}
