import { AsyncLocalStorage } from 'node:async_hooks';

/** Carries the request id (and later the caller) through every await of one request or message. */
export interface RequestContext {
  readonly requestId: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}
