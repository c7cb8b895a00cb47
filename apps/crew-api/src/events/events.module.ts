import { Module, type OnModuleInit } from '@nestjs/common';
import { AmqpConnection } from '@svc/platform';
import { CREW_EVENTS_EXCHANGE } from '@svc/contracts';

/** Declares the `crew.events` topic exchange that this app's outbox publishes record events to. */
@Module({})
export class EventsModule implements OnModuleInit {
  constructor(private readonly amqp: AmqpConnection) {}

  async onModuleInit() {
    await this.amqp.addTopology(async (channel) => {
      await channel.assertExchange(CREW_EVENTS_EXCHANGE, 'topic', { durable: true });
    });
  }
}
