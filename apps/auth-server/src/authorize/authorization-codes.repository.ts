import { Injectable } from '@nestjs/common';
import type { Transaction } from '@svc/platform';
import { AuthorizationCodeEntity } from './authorization-code.entity';

@Injectable()
export class AuthorizationCodesRepository {
  async insert(
    tx: Transaction,
    code: Omit<AuthorizationCodeEntity, 'consumedAt' | 'createdAt'>,
  ): Promise<void> {
    await tx.insert(AuthorizationCodeEntity, code);
  }

  /** Locks the code so two exchanges of one code cannot both see it unconsumed. */
  lock(tx: Transaction, codeDigest: string): Promise<AuthorizationCodeEntity | null> {
    return tx
      .createQueryBuilder(AuthorizationCodeEntity, 'c')
      .where('c.codeDigest = :codeDigest', { codeDigest })
      .setLock('pessimistic_write')
      .getOne();
  }

  async markConsumed(tx: Transaction, codeDigest: string): Promise<void> {
    await tx.update(AuthorizationCodeEntity, { codeDigest }, { consumedAt: () => 'now()' });
  }
}
