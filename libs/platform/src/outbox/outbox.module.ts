import {
  Module,
  type DynamicModule,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { AmqpConnection } from '../messaging/amqp-connection';
import { APP_CONFIG, APP_LOGGER } from '../platform.module';
import { OutboxPruner } from './outbox-pruner';
import { OutboxRelay } from './outbox-relay';
import { OutboxRepository } from './outbox.repository';

class OutboxRelayLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    private readonly relay: OutboxRelay,
    private readonly pruner: OutboxPruner,
  ) {}
  onApplicationBootstrap() {
    this.relay.start();
    this.pruner.start();
  }
  async beforeApplicationShutdown() {
    await Promise.all([this.relay.stop(), this.pruner.stop()]);
  }
}

function retentionDaysOf(config: unknown): number {
  const days = (config as { OUTBOX_RETENTION_DAYS?: unknown }).OUTBOX_RETENTION_DAYS;
  if (typeof days !== 'number') {
    throw new Error('the app uses OutboxModule, but its config spec lacks OUTBOX_CONFIG from @svc/platform');
  }
  return days;
}

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
        { provide: OutboxRepository, useValue: new OutboxRepository() },
        {
          provide: OutboxRelay,
          inject: [DataSource, AmqpConnection, APP_LOGGER],
          useFactory: (ds: DataSource, amqp: AmqpConnection, logger: Logger) =>
            new OutboxRelay(ds, amqp, logger.child({ component: 'outbox' })),
        },
        {
          provide: OutboxPruner,
          inject: [DataSource, APP_LOGGER, APP_CONFIG],
          useFactory: (ds: DataSource, logger: Logger, config: unknown) =>
            new OutboxPruner(ds, logger.child({ component: 'outbox' }), {
              retentionDays: retentionDaysOf(config),
            }),
        },
        {
          provide: OutboxRelayLifecycle,
          inject: [OutboxRelay, OutboxPruner],
          useFactory: (r: OutboxRelay, p: OutboxPruner) => new OutboxRelayLifecycle(r, p),
        },
      ],
      exports: [OutboxRepository, OutboxRelay, OutboxPruner],
    };
  }
}
