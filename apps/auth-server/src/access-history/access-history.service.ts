import { Injectable } from '@nestjs/common';
import type { AccessReadCount, MemberAccessResponse } from '@svc/contracts';
import { AccessReadsRepository } from './access-reads.repository';

/**
 * A crew member's access history (docs/access-history.md): the counts every replica sends, and
 * what the member's own pages show. Nothing here is reachable with a partner's credentials.
 */
@Injectable()
export class AccessHistoryService {
  constructor(private readonly reads: AccessReadsRepository) {}

  /** Adds a replica's batch of counts; answers how many rows it touched. */
  record(counts: readonly AccessReadCount[]): Promise<number> {
    return this.reads.add(counts);
  }

  /** The member's consents (ended ones too) and every retained day of reads, with partners' names. */
  async memberAccess(userId: string): Promise<MemberAccessResponse> {
    const [consents, reads] = await Promise.all([
      this.reads.memberConsents(userId),
      this.reads.memberReads(userId),
    ]);
    const names = new Map(consents.map((c) => [c.clientId, c.clientName]));
    const unnamed = [...new Set(reads.map((r) => r.clientId))].filter((id) => !names.has(id));
    for (const p of await this.reads.partnerNames(unnamed)) names.set(p.clientId, p.name);
    return {
      consents: consents.map((c) => ({
        client_id: c.clientId,
        client_name: c.clientName,
        scopes: c.scopes,
        granted_at: c.grantedAt.toISOString(),
        ...(c.revokedAt ? { revoked_at: c.revokedAt.toISOString() } : {}),
      })),
      reads: reads.map((r) => ({
        client_id: r.clientId,
        scope: r.scope,
        day: r.day,
        count: r.count,
        last_at: r.lastAt.toISOString(),
      })),
      partners: [...new Set([...names.keys(), ...unnamed])].map((id) => ({
        client_id: id,
        client_name: names.get(id) ?? id,
      })),
    };
  }
}
