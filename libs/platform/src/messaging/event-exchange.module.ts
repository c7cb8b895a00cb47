import { Module, type DynamicModule } from '@nestjs/common';
import { AmqpConnection } from './amqp-connection';

/** Declares the durable topic exchange an app publishes its events to, on every (re)connect. */
@Module({})
export class EventExchangeModule {
  static forRoot(exchange: string): DynamicModule {
    const declaration = {
      provide: `event-exchange:${exchange}`,
      inject: [AmqpConnection],
      useFactory: (amqp: AmqpConnection) =>
        amqp.addTopology(async (channel) => {
          await channel.assertExchange(exchange, 'topic', { durable: true });
        }),
    };
    return { module: EventExchangeModule, providers: [declaration] };
  }
}
