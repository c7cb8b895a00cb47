import {
  Global,
  Module,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { Logger } from 'pino';
import { ReadinessRegistry } from '../health/readiness';
import { APP_CONFIG, APP_LOGGER, APP_NAME } from '../platform.module';
import { AmqpConnection } from './amqp-connection';

export interface AmqpConfig {
  readonly AMQP_URL: string;
  readonly AMQP_PREFETCH: number;
}

/**
 * One AMQP connection per app, for its events and its RPC alike. A plain module, so that every
 * import of it (an app's own, RpcModule's) is the same one.
 */
@Global()
@Module({
  providers: [
    {
      provide: AmqpConnection,
      inject: [APP_NAME, APP_CONFIG, APP_LOGGER, ReadinessRegistry],
      useFactory: (app: string, config: AmqpConfig, logger: Logger, readiness: ReadinessRegistry) => {
        const connection = new AmqpConnection(
          { url: config.AMQP_URL, name: app, prefetch: config.AMQP_PREFETCH },
          logger.child({ component: 'amqp' }),
        );
        readiness.register('rabbitmq', () =>
          connection.isConnected() ? Promise.resolve() : Promise.reject(new Error('not connected')),
        );
        return connection;
      },
    },
  ],
  exports: [AmqpConnection],
})
export class MessagingModule
  implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  constructor(private readonly connection: AmqpConnection) {}

  static forRoot(): typeof MessagingModule {
    return MessagingModule;
  }
  // Features declare topology and consumers while modules initialise; connect after that (unless
  // the RPC server started it earlier: registrations then apply at once).
  onApplicationBootstrap() {
    this.connection.start();
  }
  async beforeApplicationShutdown() {
    await this.connection.drain();
  }
  async onApplicationShutdown() {
    await this.connection.close();
  }
}
