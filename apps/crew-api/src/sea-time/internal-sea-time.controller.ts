import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { InternalApi } from '../internal/internal-token.guard';
import { parseSeaTimeEntry } from './dto/sea-time-entry.dto';
import type { SeaTimeEntryResponse } from './dto/sea-time.response';
import { SeaTimeService } from './sea-time.service';

@Controller('internal/v1/crew/:userId/sea-time-entries')
export class InternalSeaTimeController {
  constructor(private readonly seaTime: SeaTimeService) {}

  @InternalApi()
  @Post()
  @HttpCode(201)
  addEntry(@Param('userId') userId: string, @Body() body: unknown): Promise<SeaTimeEntryResponse> {
    return this.seaTime.addEntry(userId, parseSeaTimeEntry(body));
  }
}
