import { Module } from '@nestjs/common';
import { OutboxRepository } from '@svc/platform';
import { RecordWriter } from './record-writer.service';
import { RecordsRepository } from './records.repository';

/** What every feature shares: the write path (member lock, write time, outbox). */
@Module({
  providers: [RecordsRepository, RecordWriter, OutboxRepository],
  exports: [RecordWriter],
})
export class RecordsModule {}
