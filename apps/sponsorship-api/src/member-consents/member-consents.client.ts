import { Inject, Injectable, Optional } from '@nestjs/common';
import { AUTH_CONSENTS_CONNECTED, CONNECTED_MEMBERS_MAX } from '@svc/contracts';
import { APP_LOGGER, AppMetrics, RpcClient } from '@svc/platform';
import type { Counter } from 'prom-client';
import type { Logger } from 'pino';

/** Consents live in auth-server, asked at every answer (never mirrored), so a disconnect hides the name at once. */
@Injectable()
export class MemberConsentsClient {
  private readonly failures?: Counter;

  constructor(
    private readonly rpc: RpcClient,
    @Inject(APP_LOGGER) private readonly logger: Logger,
    @Optional() metrics?: AppMetrics,
  ) {
    this.failures = metrics?.counter(
      'sponsorship_consent_lookup_failures_total',
      'answers whose crew names were withheld because auth-server could not say who consented',
    );
  }

  /** The members among `userIds` connected to `clientId` now; none when auth-server (or the budget) cannot answer. */
  async connectedAmong(
    clientId: string,
    userIds: readonly string[],
    timeoutMs?: number,
  ): Promise<ReadonlySet<string>> {
    const unique = [...new Set(userIds)];
    const connected = new Set<string>();
    try {
      for (let i = 0; i < unique.length; i += CONNECTED_MEMBERS_MAX) {
        const answer = await this.rpc.call(
          AUTH_CONSENTS_CONNECTED,
          { client_id: clientId, user_ids: unique.slice(i, i + CONNECTED_MEMBERS_MAX) },
          timeoutMs,
        );
        for (const id of answer.user_ids) connected.add(id);
      }
    } catch (err) {
      this.failures?.inc();
      this.logger.warn(
        { err: (err as Error).message, client_id: clientId, members: unique.length },
        'consents could not be looked up; crew names withheld from this answer',
      );
      return new Set();
    }
    return connected;
  }
}
