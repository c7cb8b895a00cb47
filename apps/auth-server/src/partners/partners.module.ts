import { Module } from '@nestjs/common';
import { CryptoModule } from '../crypto/crypto.module';
import { PartnerCredentialsHandler } from './partner-credentials.handler';
import { PartnerDigestVerifier } from './partner-digest.verifier';
import { PartnersRepository } from './partners.repository';
import { PartnersService } from './partners.service';
import { WebhookSigningKeysHandler } from './webhook-signing-keys.handler';

@Module({
  imports: [CryptoModule],
  controllers: [PartnerCredentialsHandler, WebhookSigningKeysHandler],
  providers: [PartnersRepository, PartnersService, PartnerDigestVerifier],
  exports: [PartnersService, PartnerDigestVerifier],
})
export class PartnersModule {}
