import {
  Module,
  type DynamicModule,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { AmqpConnection } from '../messaging/amqp-connection';
import { APP_LOGGER } from '../platform.module';
import { OutboxRelay } from './outbox-relay';
import { OutboxRepository } from './outbox.repository';

class OutboxRelayLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(private readonly relay: OutboxRelay) {}
  onApplicationBootstrap() {
    this.relay.start();
  }
  async beforeApplicationShutdown() {
    await this.relay.stop();
  }
}

/** The transactional outbox: OutboxRepository for writers, and a relay running in every replica. */
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
          provide: OutboxRelayLifecycle,
          inject: [OutboxRelay],
          useFactory: (r: OutboxRelay) => new OutboxRelayLifecycle(r),
        },
      ],
      exports: [OutboxRepository, OutboxRelay],
    };
  }
}
