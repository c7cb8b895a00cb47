import { Module } from '@nestjs/common';
import { GrantsPruner } from './grants-pruner';
import { GrantsRetentionRepository } from './grants-retention.repository';

/** Housekeeping of auth-server's tables: expired codes and token pairs. */
@Module({ providers: [GrantsRetentionRepository, GrantsPruner], exports: [GrantsPruner] })
export class RetentionModule {}
