import { Module } from '@nestjs/common';
import { CryptoModule } from '../crypto/crypto.module';
import { LoginHandler } from './login.handler';
import { SignInThrottle } from './sign-in-throttle';
import { SignInService } from './sign-in.service';
import { UsersRepository } from './users.repository';
import { UsersService } from './users.service';

@Module({
  imports: [CryptoModule],
  controllers: [LoginHandler],
  providers: [UsersRepository, UsersService, SignInThrottle, SignInService],
  exports: [UsersService, UsersRepository],
})
export class UsersModule {}
