import { Module } from '@nestjs/common';
import { SeatsModule } from '../seats/seats.module';
import { PortalSeatsHandler } from './portal-seats.handler';
import { PortalSeatsService } from './portal-seats.service';

/** The partner portal's seats, answered over RPC (`rpc.sponsorship-api`). */
@Module({ imports: [SeatsModule], controllers: [PortalSeatsHandler], providers: [PortalSeatsService] })
export class PortalSeatsModule {}
