import { DomainException } from '@svc/platform';

/** What the webhook recipients refuse, without a transport: the RPC mapper decides the answer. */
export class WebhooksException extends DomainException<'dispatcher_only'> {}
