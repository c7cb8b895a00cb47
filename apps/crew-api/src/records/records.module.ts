import { Module } from '@nestjs/common';
import { OutboxRepository } from '@svc/platform';
import { PreparedReads } from './prepared-reads';
import { RecordWriter } from './record-writer.service';
import { RecordsRepository } from './records.repository';

/** What every feature shares: the write path (member lock, write time, outbox) and prepared reads. */
@Module({
  providers: [RecordsRepository, RecordWriter, OutboxRepository, PreparedReads],
  exports: [RecordWriter, PreparedReads],
})
export class RecordsModule {}
