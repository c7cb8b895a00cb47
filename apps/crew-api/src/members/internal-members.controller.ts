import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { InternalApi } from '../internal/internal-token.guard';
import type { MemberProfileResponse } from './dto/member-profile.response';
import { parseMemberRegistration } from './dto/member-registration.dto';
import { parseProfilePatch } from './dto/profile-patch.dto';
import { parseUserLookup, type UserLookupResponse } from './dto/user-lookup.dto';
import { MemberRegistrationService } from './member-registration.service';
import { MembersService } from './members.service';

/** The internal records API's profile and user look-up (docs/rules.md, Record changes). */
@Controller('internal/v1')
export class InternalMembersController {
  constructor(
    private readonly members: MembersService,
    private readonly registration: MemberRegistrationService,
  ) {}

  @InternalApi()
  @Post('crew')
  @HttpCode(201)
  register(@Body() body: unknown): Promise<MemberProfileResponse> {
    return this.registration.register(parseMemberRegistration(body));
  }

  @InternalApi()
  @Patch('crew/:userId/profile')
  updateProfile(@Param('userId') userId: string, @Body() body: unknown): Promise<MemberProfileResponse> {
    return this.members.updateProfile(userId, parseProfilePatch(body));
  }

  @InternalApi()
  @Get('users')
  findUser(@Query() query: unknown): Promise<UserLookupResponse> {
    return this.members.findByEmail(parseUserLookup(query).email);
  }
}
