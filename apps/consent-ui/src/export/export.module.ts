import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/sessions.module';
import { ExportController } from './export.controller';
import { ExportService } from './export.service';

/** The crew member's data export ("Download my data"). */
@Module({ imports: [SessionsModule], controllers: [ExportController], providers: [ExportService] })
export class ExportModule {}
