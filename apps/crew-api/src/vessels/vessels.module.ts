import { Module } from '@nestjs/common';
import { APP_CONFIG } from '@svc/platform';
import type { CrewApiConfig } from '../config';
import { RecordsModule } from '../records/records.module';
import { CursorCodec } from './cursor';
import { InternalVesselsController } from './internal-vessels.controller';
import { VesselsController } from './vessels.controller';
import { VesselsRepository } from './vessels.repository';
import { VesselPageCache, VesselsService } from './vessels.service';

@Module({
  imports: [RecordsModule],
  controllers: [VesselsController, InternalVesselsController],
  providers: [
    VesselsRepository,
    VesselsService,
    {
      provide: CursorCodec,
      inject: [APP_CONFIG],
      useFactory: (config: Pick<CrewApiConfig, 'CURSOR_SIGNING_KEY'>) =>
        new CursorCodec(config.CURSOR_SIGNING_KEY),
    },
    {
      provide: VesselPageCache,
      inject: [APP_CONFIG],
      useFactory: (config: Pick<CrewApiConfig, 'VESSEL_PAGE_CACHE_ENTRIES'>) =>
        new VesselPageCache(config.VESSEL_PAGE_CACHE_ENTRIES),
    },
  ],
})
export class VesselsModule {}
