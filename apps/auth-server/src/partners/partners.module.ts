import { Module } from '@nestjs/common';
import { CryptoModule } from '../crypto/crypto.module';
import { PartnerCredentialsHandler } from './partner-credentials.handler';
import { PartnerDigestVerifier } from './partner-digest.verifier';
import { PartnersRepository } from './partners.repository';
import { PartnersService } from './partners.service';

@Module({
  imports: [CryptoModule],
  controllers: [PartnerCredentialsHandler],
  providers: [PartnersRepository, PartnersService, PartnerDigestVerifier],
  exports: [PartnersService, PartnerDigestVerifier],
})
export class PartnersModule {}
