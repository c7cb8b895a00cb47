import { Module } from '@nestjs/common';
import { ConsentsModule } from '../consents/consents.module';
import { PartnersModule } from '../partners/partners.module';
import { AuthorizationCodesRepository } from './authorization-codes.repository';
import { AuthorizeHandler } from './authorize.handler';
import { AuthorizeService } from './authorize.service';

@Module({
  imports: [PartnersModule, ConsentsModule],
  controllers: [AuthorizeHandler],
  providers: [AuthorizationCodesRepository, AuthorizeService],
})
export class AuthorizeModule {}
