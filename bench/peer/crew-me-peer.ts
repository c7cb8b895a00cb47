/**
 * The peer of `npm run bench -- crew`: `GET /v1/me` built the way the NestJS documentation teaches,
 * on the same database, Redis and machine as crew-api, so the two are measured side by side.
 * - Authentication: a passport-http-bearer strategy (`@nestjs/passport`) whose `validate` looks the
 *   token up in Redis (the bench stores the token's principal there, as a token cache would).
 * - Rate limiting: `@nestjs/throttler` as a global guard with its Redis storage
 *   (`@nest-lab/throttler-storage-redis`), a minute and a day window like crew-api's, with limits
 *   no run reaches.
 * - Data: TypeORM entities and a repository `findOne` with the membership relation.
 * It runs on Fastify, as crew-api does, so the adapter is not what differs. Bench-only: nothing
 * under apps/ or libs/ imports it.
 *
 * Run: node -r ./scripts/lib/ts-register.cjs bench/peer/crew-me-peer.ts <port>
 * Environment: DATABASE_URL (crew-api's database; the `crew` schema), REDIS_URL, PEER_KEY_PREFIX.
 */
import 'reflect-metadata';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import { Controller, Get, Injectable, Module, NotFoundException, Req, UseGuards } from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { AuthGuard, PassportModule, PassportStrategy } from '@nestjs/passport';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import { InjectRepository, TypeOrmModule } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import Redis from 'ioredis';
import { Strategy } from 'passport-http-bearer';
import { Column, Entity, JoinColumn, OneToOne, PrimaryColumn, type Repository } from 'typeorm';

@Entity({ name: 'memberships', schema: 'crew' })
class MembershipRow {
  @PrimaryColumn({ name: 'user_id' }) userId!: string;
  @Column() tier!: string;
  @Column() source!: string;
  @Column({ type: 'timestamptz' }) since!: Date;
  @Column({ name: 'sponsor_client_id', type: 'text', nullable: true }) sponsorClientId!: string | null;
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true }) expiresAt!: Date | null;
}

@Entity({ name: 'crew_members', schema: 'crew' })
class CrewMemberRow {
  @PrimaryColumn({ name: 'user_id' }) userId!: string;
  @Column() name!: string;
  @Column() role!: string;
  @Column() country!: string;
  @Column({ name: 'photo_url', type: 'text', nullable: true }) photoUrl!: string | null;
  @Column({ name: 'record_updated_at', type: 'timestamptz' }) recordUpdatedAt!: Date;
  @OneToOne(() => MembershipRow)
  @JoinColumn({ name: 'user_id', referencedColumnName: 'userId' })
  membership!: MembershipRow | null;
}

interface Principal {
  readonly user_id: string;
  readonly client_id: string;
  readonly scopes: readonly string[];
}

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefix = process.env.PEER_KEY_PREFIX ?? 'peer:';

@Injectable()
class BearerStrategy extends PassportStrategy(Strategy) {
  async validate(token: string): Promise<Principal | false> {
    const key = `${prefix}token:${createHash('sha256').update(token).digest('hex')}`;
    const cached = await redis.get(key);
    return cached ? (JSON.parse(cached) as Principal) : false;
  }
}

@Controller('v1')
class MeController {
  constructor(@InjectRepository(CrewMemberRow) private readonly members: Repository<CrewMemberRow>) {}

  @Get('me')
  @UseGuards(AuthGuard('bearer'))
  async me(@Req() request: { user: Principal }) {
    const m = await this.members.findOne({
      where: { userId: request.user.user_id },
      relations: { membership: true },
    });
    if (!m) throw new NotFoundException();
    const sponsor = m.membership?.sponsorClientId === request.user.client_id;
    return {
      user_id: m.userId,
      name: m.name,
      role: m.role,
      country: m.country,
      photo_url: m.photoUrl,
      record_updated_at: m.recordUpdatedAt.toISOString(),
      membership: {
        tier: m.membership?.tier ?? 'free',
        source: m.membership?.source ?? 'self',
        since: (m.membership?.since ?? m.recordUpdatedAt).toISOString(),
        ...(sponsor
          ? { expires_at: m.membership?.expiresAt?.toISOString() ?? null, sponsored_by_you: true }
          : {}),
      },
    };
  }
}

@Module({
  imports: [
    PassportModule,
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: process.env.DATABASE_URL,
      entities: [CrewMemberRow, MembershipRow],
      synchronize: false,
    }),
    TypeOrmModule.forFeature([CrewMemberRow]),
    ThrottlerModule.forRoot({
      throttlers: [
        { name: 'minute', ttl: 60_000, limit: 1_000_000_000 },
        { name: 'day', ttl: 86_400_000, limit: 1_000_000_000 },
      ],
      storage: new ThrottlerStorageRedisService(redis),
    }),
  ],
  controllers: [MeController],
  providers: [BearerStrategy, { provide: APP_GUARD, useClass: ThrottlerGuard }],
})
class PeerModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create<NestFastifyApplication>(PeerModule, new FastifyAdapter(), {
    logger: ['error', 'warn'],
  });
  await app.listen(Number(process.argv[2]), '127.0.0.1');
  process.send?.('ready');
}

void main();
