import { Module } from '@nestjs/common';
import { MemberConsentsClient } from './member-consents.client';

/** Who consented to which partner, asked of auth-server over RPC. */
@Module({ providers: [MemberConsentsClient], exports: [MemberConsentsClient] })
export class MemberConsentsModule {}
