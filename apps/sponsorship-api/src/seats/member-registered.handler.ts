import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { CREW_EVENTS_EXCHANGE, MEMBER_REGISTERED, parseMemberRegistered } from '@svc/contracts';
import { AmqpConnection, APP_LOGGER, type InboundMessage, type TopologyChannel } from '@svc/platform';
import type { Logger } from 'pino';
import { SeatsService } from './seats.service';

/** New crew members, from crew-api's outbox: the invitations waiting for their e-mail. */
export const MEMBERS_QUEUE = 'sponsorship.member-registered';
const PARKED = `${MEMBERS_QUEUE}.parked`;
/** A message that failed twice (crew-api or the database down) waits this long before another try. */
const PARKING_MS = 10_000;
const QUORUM = {
  'x-queue-type': 'quorum',
  'x-dead-letter-strategy': 'at-least-once',
  'x-overflow': 'reject-publish',
};

async function declareTopology(channel: TopologyChannel): Promise<void> {
  await channel.assertExchange(CREW_EVENTS_EXCHANGE, 'topic', { durable: true });
  await channel.assertQueue(MEMBERS_QUEUE, {
    durable: true,
    arguments: { ...QUORUM, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': PARKED },
  });
  await channel.assertQueue(PARKED, {
    durable: true,
    arguments: {
      ...QUORUM,
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': MEMBERS_QUEUE,
      'x-message-ttl': PARKING_MS,
    },
  });
  await channel.bindQueue(MEMBERS_QUEUE, CREW_EVENTS_EXCHANGE, MEMBER_REGISTERED);
}

/** On `crew.member.registered`, activates the invited seat of that e-mail; a malformed message is logged and dropped. */
@Injectable()
export class MemberRegisteredHandler implements OnModuleInit {
  constructor(
    private readonly amqp: AmqpConnection,
    private readonly seats: SeatsService,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.amqp.addTopology(declareTopology);
    await this.amqp.consume(MEMBERS_QUEUE, (m) => this.onMessage(m));
  }

  private async onMessage(message: InboundMessage): Promise<void> {
    let event;
    try {
      event = parseMemberRegistered(JSON.parse(message.content.toString('utf8')));
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message, message_id: message.properties.messageId },
        'malformed crew.member.registered message dropped',
      );
      return;
    }
    await this.seats.activateInvited(event);
  }
}
