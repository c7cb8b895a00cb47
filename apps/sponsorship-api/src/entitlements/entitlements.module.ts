import { Module } from '@nestjs/common';
import { EntitlementsClient } from './entitlements.client';

/** Premium for sponsored members, granted and dropped on crew-api over RPC. */
@Module({ providers: [EntitlementsClient], exports: [EntitlementsClient] })
export class EntitlementsModule {}
