import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

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
}

/**
 * auth-server still lists this class among its TypeORM entities; nothing queries through it.
 * It goes with that list.
 */
@Entity({ name: 'outbox_messages' })
@Index('outbox_messages_unpublished', ['id'], { where: 'published_at IS NULL' })
@Index('outbox_messages_retention', ['createdAt'], { where: 'published_at IS NOT NULL' })
export class OutboxMessageEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'message_id', type: 'text', unique: true })
  messageId!: string;

  @Column({ type: 'text' })
  exchange!: string;

  @Column({ name: 'routing_key', type: 'text' })
  routingKey!: string;

  @Column({ type: 'jsonb' })
  payload!: unknown;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'published_at', type: 'timestamptz', nullable: true })
  publishedAt!: Date | null;

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError!: string | null;
}
