import { Module } from '@nestjs/common';
import { APP_CONFIG } from '@svc/platform';
import type { CrewApiConfig } from '../config';
import { RecordsModule } from '../records/records.module';
import { InternalSeaTimeController } from './internal-sea-time.controller';
import { SeaTimeController } from './sea-time.controller';
import { SeaTimeRepository } from './sea-time.repository';
import { SeaTimeCache, SeaTimeService } from './sea-time.service';

@Module({
  imports: [RecordsModule],
  controllers: [SeaTimeController, InternalSeaTimeController],
  providers: [
    SeaTimeRepository,
    SeaTimeService,
    {
      provide: SeaTimeCache,
      inject: [APP_CONFIG],
      useFactory: (config: Pick<CrewApiConfig, 'SEA_TIME_CACHE_ENTRIES'>) =>
        new SeaTimeCache(config.SEA_TIME_CACHE_ENTRIES),
    },
  ],
})
export class SeaTimeModule {}
