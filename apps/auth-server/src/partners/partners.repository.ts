import { Injectable } from '@nestjs/common';
import { TransactionRunner, type Transaction } from '@svc/platform';
import { PartnerEntity } from './partner.entity';

export type NewPartner = Omit<PartnerEntity, 'createdAt' | 'updatedAt'>;

@Injectable()
export class PartnersRepository {
  constructor(private readonly transactions: TransactionRunner) {}

  findById(clientId: string, tx: Transaction = this.transactions.outside): Promise<PartnerEntity | null> {
    // PostgreSQL text cannot hold a NUL, so no partner has one; asking would be a database error.
    if (clientId.includes('\u0000')) return Promise.resolve(null);
    return tx.findOne(PartnerEntity, { where: { clientId } });
  }

  list(): Promise<PartnerEntity[]> {
    return this.transactions.outside.find(PartnerEntity, { order: { createdAt: 'ASC' } });
  }

  /** Creates the partner, or brings an existing one in line (sandbox seed, idempotent). */
  async upsert(partner: NewPartner, tx: Transaction = this.transactions.outside): Promise<void> {
    await tx
      .createQueryBuilder()
      .insert()
      .into(PartnerEntity)
      .values(partner)
      .orUpdate(
        [
          'secret_digest',
          'name',
          'redirect_uris',
          'allowed_scopes',
          'webhook_url',
          'webhook_secret_current',
          'webhook_secret_next',
          'sponsorship',
          'member_left',
          'suspended',
        ],
        ['client_id'],
      )
      .execute();
  }

  async insert(partner: NewPartner, tx: Transaction = this.transactions.outside): Promise<void> {
    await tx.insert(PartnerEntity, partner);
  }

  async update(
    clientId: string,
    changes: Partial<Omit<PartnerEntity, 'clientId' | 'createdAt'>>,
    tx: Transaction = this.transactions.outside,
  ): Promise<boolean> {
    const result = await tx.update(PartnerEntity, { clientId }, { ...changes, updatedAt: () => 'now()' });
    return (result.affected ?? 0) > 0;
  }
}
