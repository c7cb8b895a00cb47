import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, GroupBatcher, type ConfigOf } from '@svc/platform';
import type { AUTH_SERVER_CONFIG } from '../config';
import { TokenPairsRepository, type CodeExchange, type ExchangeOutcome } from './token-pairs.repository';

/** Exchanges sent in one statement at most (a batch's locks are held until its commit). */
const MAX_EXCHANGE_BATCH = 16;

/**
 * Group commit of code exchanges (docs/architecture.md, "Token endpoint", step 12): at most
 * TOKEN_EXCHANGE_CONCURRENCY statements are in flight per process, and the exchanges that arrive
 * meanwhile go together in the next one (`token_exchange_batch`), sharing its round trip and its
 * commit. An exchange revokes nothing, so unlike a refresh it has no tombstone to write first.
 *
 * Each statement gives way after 100 ms of waiting on a lock, so no lock (a consent row a
 * disconnect holds, say) holds a slot, and every other partner's exchanges behind it, for longer;
 * its exchanges then go alone, outside the slots.
 */
@Injectable()
export class ExchangeGroupCommit {
  private readonly batches: GroupBatcher<CodeExchange, ExchangeOutcome | undefined>;

  constructor(
    private readonly pairs: TokenPairsRepository,
    @Inject(APP_CONFIG)
    config: Pick<ConfigOf<typeof AUTH_SERVER_CONFIG>, 'TOKEN_EXCHANGE_CONCURRENCY'>,
  ) {
    this.batches = new GroupBatcher(
      (batch) => this.pairs.exchangeBatch(batch),
      MAX_EXCHANGE_BATCH,
      config.TOKEN_EXCHANGE_CONCURRENCY,
    );
  }

  /** What `token_exchange` would answer for this exchange alone, after those sent before it. */
  async exchange(exchange: CodeExchange): Promise<ExchangeOutcome> {
    // Undefined: the batch gave way to a lock and consumed nothing.
    return (await this.batches.submit(exchange)) ?? this.pairs.exchangeCode(exchange);
  }
}
