import { Module } from '@nestjs/common';
import { RecordsModule } from '../records/records.module';
import { InternalSeaTimeController } from './internal-sea-time.controller';
import { SeaTimeController } from './sea-time.controller';
import { SeaTimeRepository } from './sea-time.repository';
import { SeaTimeService } from './sea-time.service';

@Module({
  imports: [RecordsModule],
  controllers: [SeaTimeController, InternalSeaTimeController],
  providers: [SeaTimeRepository, SeaTimeService],
})
export class SeaTimeModule {}
