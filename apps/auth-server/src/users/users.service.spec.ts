import type { Logger } from 'pino';
import { PasswordHasher } from '../crypto/secrets';
import type { UserEntity } from './user.entity';
import type { UsersRepository } from './users.repository';
import { UsersService } from './users.service';

const logger = { warn: () => undefined } as unknown as Logger;

/** One member in memory; replacePasswordHash behaves as the repository's conditional UPDATE. */
function fakeRepository(user: UserEntity) {
  const replaced: string[] = [];
  const repository = {
    findByEmail: (email: string) => Promise.resolve(email === user.email ? { ...user } : null),
    findById: (id: string) => Promise.resolve(id === user.userId ? { ...user } : null),
    replacePasswordHash: (userId: string, previous: string, next: string) => {
      if (userId !== user.userId || user.passwordHash !== previous) return Promise.resolve(false);
      user.passwordHash = next;
      replaced.push(next);
      return Promise.resolve(true);
    },
    upsert: (row: Partial<UserEntity>) => {
      Object.assign(user, row);
      return Promise.resolve();
    },
  } as unknown as UsersRepository;
  return { repository, replaced };
}

async function memberHashedAt(cost: number, password: string): Promise<UserEntity> {
  return {
    userId: 'usr_1',
    email: 'a@x.test',
    name: 'A',
    passwordHash: await new PasswordHasher(cost).hash(password),
  } as UserEntity;
}

describe('UsersService: password hashes are upgraded at a successful sign-in', () => {
  it('rehashes a weaker stored hash with the current parameters after a right password', async () => {
    const user = await memberHashedAt(11, 'pw');
    const { repository, replaced } = fakeRepository(user);
    const service = new UsersService(repository, new PasswordHasher(12), logger);

    expect((await service.verify('a@x.test', 'pw', '203.0.113.1'))?.userId).toBe('usr_1');
    await service.onApplicationShutdown();
    expect(replaced).toHaveLength(1);
    expect(user.passwordHash).toMatch(/^scrypt\$4096\$8\$1\$/);
    // The new hash is of the same password, and needs nothing more.
    expect((await service.verify('a@x.test', 'pw'))?.userId).toBe('usr_1');
    await service.onApplicationShutdown();
    expect(replaced).toHaveLength(1);
  });

  it('never touches the stored hash on a failed sign-in, or for an unknown e-mail', async () => {
    const user = await memberHashedAt(11, 'pw');
    const before = user.passwordHash;
    const { repository, replaced } = fakeRepository(user);
    const service = new UsersService(repository, new PasswordHasher(12), logger);

    expect(await service.verify('a@x.test', 'wrong')).toBeUndefined();
    expect(await service.verify('nobody@x.test', 'pw')).toBeUndefined();
    await service.onApplicationShutdown();
    expect(replaced).toEqual([]);
    expect(user.passwordHash).toBe(before);
  });

  it('leaves a hash as strong as the current parameters alone', async () => {
    const user = await memberHashedAt(12, 'pw');
    const { repository, replaced } = fakeRepository(user);
    const service = new UsersService(repository, new PasswordHasher(12), logger);
    expect(await service.verify('a@x.test', 'pw')).toBeDefined();
    await service.onApplicationShutdown();
    expect(replaced).toEqual([]);
  });

  it('upgrades a seeded member hashed under an older cost, and keeps a current one', async () => {
    const user = await memberHashedAt(11, 'pw');
    const { repository } = fakeRepository(user);
    const service = new UsersService(repository, new PasswordHasher(12), logger);
    await service.seedAll([{ userId: 'usr_1', email: 'a@x.test', name: 'A', password: 'pw' }]);
    expect(user.passwordHash).toMatch(/^scrypt\$4096\$/);
    const current = user.passwordHash;
    await service.seedAll([{ userId: 'usr_1', email: 'a@x.test', name: 'A', password: 'pw' }]);
    expect(user.passwordHash).toBe(current);
  });

  it('seeds the sandbox members with one hash of their shared password, and on a later start checks it once', async () => {
    const rows = new Map<string, UserEntity>();
    let upserts = 0;
    const repository = {
      findById: (id: string) => Promise.resolve(rows.has(id) ? { ...rows.get(id)! } : null),
      upsert: (row: UserEntity) => {
        upserts += 1;
        rows.set(row.userId, { ...row });
        return Promise.resolve();
      },
    } as unknown as UsersRepository;
    const hasher = new PasswordHasher(12);
    let hashed = 0;
    let verified = 0;
    const hash = hasher.hash.bind(hasher);
    const verify = hasher.verify.bind(hasher);
    hasher.hash = (...args) => ((hashed += 1), hash(...args));
    hasher.verify = (...args) => ((verified += 1), verify(...args));
    const service = new UsersService(repository, hasher, logger);
    const members = ['a', 'b', 'c'].map((n) => ({
      userId: `usr_${n}`,
      email: `${n}@x.test`,
      name: n,
      password: 'published',
    }));

    await service.seedAll(members);
    expect([hashed, upserts]).toEqual([1, 3]);
    for (const m of members)
      await expect(verify('published', rows.get(m.userId)!.passwordHash)).resolves.toBe(true);

    await service.seedAll(members);
    expect([hashed, verified, upserts]).toEqual([1, 1, 3]);
  });
});
