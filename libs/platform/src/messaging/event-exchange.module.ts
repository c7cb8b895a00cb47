import { Module, type DynamicModule, type OnModuleInit } from '@nestjs/common';
import { AmqpConnection } from './amqp-connection';

/** Declares the durable topic exchange an app publishes its events to, on every (re)connect. */
@Module({})
export class EventExchangeModule {
  static forRoot(exchange: string): DynamicModule {
    class ExchangeDeclaration implements OnModuleInit {
      constructor(private readonly amqp: AmqpConnection) {}
      async onModuleInit() {
        await this.amqp.addTopology(async (channel) => {
          await channel.assertExchange(exchange, 'topic', { durable: true });
        });
      }
    }
    return {
      module: EventExchangeModule,
      providers: [
        {
          provide: ExchangeDeclaration,
          inject: [AmqpConnection],
          useFactory: (a: AmqpConnection) => new ExchangeDeclaration(a),
        },
      ],
    };
  }
}
