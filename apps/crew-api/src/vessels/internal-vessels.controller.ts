import { Body, Controller, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { InternalApi } from '../internal/internal-token.guard';
import { parseNewVesselPeriod, parseVesselPeriodPatch } from './dto/vessel-period.dto';
import type { WrittenPeriodResponse } from './dto/vessels.response';
import { VesselsService } from './vessels.service';

@Controller('internal/v1/crew/:userId/vessel-periods')
export class InternalVesselsController {
  constructor(private readonly vessels: VesselsService) {}

  @InternalApi()
  @Post()
  @HttpCode(201)
  add(@Param('userId') userId: string, @Body() body: unknown): Promise<WrittenPeriodResponse> {
    return this.vessels.addPeriod(userId, parseNewVesselPeriod(body));
  }

  @InternalApi()
  @Patch(':periodId')
  amend(
    @Param('userId') userId: string,
    @Param('periodId') periodId: string,
    @Body() body: unknown,
  ): Promise<WrittenPeriodResponse> {
    return this.vessels.amendPeriod(userId, periodId, parseVesselPeriodPatch(body));
  }
}
