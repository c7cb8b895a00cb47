import { DomainException } from '@svc/platform';

export type DeliveryLogErrorCode = 'unknown_delivery' | 'still_pending';

/** What an operator asked for cannot be done; the CLI turns the code into a message and exit code. */
export class DeliveryLogException extends DomainException<DeliveryLogErrorCode> {}
