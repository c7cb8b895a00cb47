import { DomainException } from '@svc/platform';

export enum DeliveryLogErrorCode {
  UnknownDelivery = 'unknown_delivery',
  StillPending = 'still_pending',
  QueuesMissing = 'queues_missing',
  BrokerUnavailable = 'broker_unavailable',
}

/** What an operator asked for cannot be done; the CLI turns the code into a message and exit code. */
export class DeliveryLogException extends DomainException<DeliveryLogErrorCode> {}
