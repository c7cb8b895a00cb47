import { Module } from '@nestjs/common';
import { SecurityModule } from '@svc/security';
import { ConsentsModule } from '../consents/consents.module';
import { PartnerDigestVerifier } from '../partners/partner-digest.verifier';
import { PartnersModule } from '../partners/partners.module';
import { TokenPairsRepository } from './token-pairs.repository';
import { TokenController } from './token.controller';
import { TokenMetrics } from './token-metrics';
import { TokensHandler } from './tokens.handler';
import { TokensService } from './tokens.service';

/** Above consents and partners, so the rules that end tokens with them live here too. */
@Module({
  imports: [ConsentsModule, PartnersModule],
  controllers: [TokenController, TokensHandler],
  providers: [TokenPairsRepository, TokensService, TokenMetrics],
  exports: [TokensService],
})
export class TokensModule {}

/**
 * auth-server's own bearer endpoint (userinfo) asks this token store directly, not over RPC; its
 * Basic endpoint (portal links) asks its own partner store.
 */
export const TOKENS_SECURITY = SecurityModule.forRoot({
  introspector: { useExisting: TokensService },
  partners: true,
  partnerVerifier: { useExisting: PartnerDigestVerifier },
  imports: [TokensModule, PartnersModule],
});
