import { Module, type DynamicModule } from '@nestjs/common';
import { EVENT_TYPES } from '@svc/contracts';
import type { Logger } from 'pino';
import { TransactionRunner } from '../database/transaction-runner';
import { AmqpConnection } from '../messaging/amqp-connection';
import { AppMetrics } from '../metrics/app-metrics';
import { APP_CONFIG, APP_LOGGER } from '../platform.module';
import { OutboxPruner } from './outbox-pruner';
import { OutboxRelay } from './outbox-relay';
import { OutboxRepository } from './outbox.repository';

/**
 * The backlog as Prometheus sees it, read from the table at each scrape: a growing count or age
 * means the broker is refusing or no relay runs, and events are waiting. One query serves both
 * gauges of a scrape; with the database away they read NaN and the rest of /metrics still renders.
 */
function registerBacklogGauges(metrics: AppMetrics, repository: OutboxRepository): void {
  let last: { at: number; backlog: Promise<{ messages: number; oldestSeconds: number }> } | undefined;
  const read = () => {
    if (!last || Date.now() - last.at > 1000) {
      const backlog = repository.backlog().catch(() => ({ messages: Number.NaN, oldestSeconds: Number.NaN }));
      last = { at: Date.now(), backlog };
    }
    return last.backlog;
  };
  metrics.gauge('outbox_unpublished_messages', 'outbox messages not yet published to RabbitMQ', async (g) => {
    g.set((await read()).messages);
  });
  metrics.gauge(
    'outbox_oldest_unpublished_age_seconds',
    'how long the oldest unpublished outbox message has waited',
    async (g) => {
      g.set((await read()).oldestSeconds);
    },
  );
}

function retentionDaysOf(config: unknown): number {
  const { OUTBOX_RETENTION_DAYS: retentionDays } = config as { OUTBOX_RETENTION_DAYS?: unknown };
  if (typeof retentionDays !== 'number') {
    throw new Error('the app uses OutboxModule, but its config spec lacks OUTBOX_CONFIG from @svc/platform');
  }
  return retentionDays;
}

/** The webhook event types: the one consumer of theirs, webhook-dispatcher, reads packed messages only. */
const WEBHOOK_EVENT_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES);

/**
 * The transactional outbox: OutboxRepository for writers, and in every replica a relay and a
 * pruner (published messages older than OUTBOX_RETENTION_DAYS).
 */
@Module({})
export class OutboxModule {
  static forRoot(): DynamicModule {
    return {
      module: OutboxModule,
      providers: [
        OutboxRepository,
        {
          provide: OutboxRelay,
          inject: [TransactionRunner, OutboxRepository, AmqpConnection, APP_LOGGER],
          useFactory: (
            tx: TransactionRunner,
            repository: OutboxRepository,
            amqp: AmqpConnection,
            logger: Logger,
          ) =>
            new OutboxRelay(tx, repository, amqp, logger.child({ component: 'outbox' }), {
              batchable: (routingKey) => WEBHOOK_EVENT_TYPES.has(routingKey),
            }),
        },
        {
          provide: OutboxPruner,
          inject: [OutboxRepository, APP_LOGGER, APP_CONFIG],
          useFactory: (repository: OutboxRepository, logger: Logger, config: unknown) =>
            new OutboxPruner(repository, logger.child({ component: 'outbox' }), {
              retentionDays: retentionDaysOf(config),
            }),
        },
        {
          provide: 'OUTBOX_METRICS',
          inject: [AppMetrics, OutboxRepository],
          useFactory: (metrics: AppMetrics, repository: OutboxRepository) =>
            registerBacklogGauges(metrics, repository),
        },
      ],
      exports: [OutboxRepository, OutboxRelay, OutboxPruner],
    };
  }
}
