import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/sessions.module';
import { ConnectionsController } from './connections.controller';
import { ConnectionsService } from './connections.service';

@Module({ imports: [SessionsModule], controllers: [ConnectionsController], providers: [ConnectionsService] })
export class ConnectionsModule {}
