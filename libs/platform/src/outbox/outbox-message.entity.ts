/**
 * A message waiting to be published (a row of `outbox_messages`). Written in the same
 * transaction as the change it announces, so a committed change always gets its message and a
 * rolled-back one never does. Each app that publishes has this table in its own schema.
 */
export interface OutboxMessage {
  /** bigserial, read as text. */
  readonly id: string;
  /** The id receivers deduplicate on. */
  readonly messageId: string;
  readonly exchange: string;
  readonly routingKey: string;
  readonly payload: unknown;
  readonly createdAt: Date;
  readonly publishedAt: Date | null;
  readonly attempts: number;
  readonly lastError: string | null;
  /**
   * The W3C `traceparent` of the operation that wrote the row (null when tracing is off): the
   * relay publishes the message as part of that operation's trace.
   */
  readonly traceContext: string | null;
}
