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
    await service.upgradesSettled();
    expect(replaced).toHaveLength(1);
    expect(user.passwordHash).toMatch(/^scrypt\$4096\$8\$1\$/);
    // The new hash is of the same password, and needs nothing more.
    expect((await service.verify('a@x.test', 'pw'))?.userId).toBe('usr_1');
    await service.upgradesSettled();
    expect(replaced).toHaveLength(1);
  });

  it('never touches the stored hash on a failed sign-in, or for an unknown e-mail', async () => {
    const user = await memberHashedAt(11, 'pw');
    const before = user.passwordHash;
    const { repository, replaced } = fakeRepository(user);
    const service = new UsersService(repository, new PasswordHasher(12), logger);

    expect(await service.verify('a@x.test', 'wrong')).toBeUndefined();
    expect(await service.verify('nobody@x.test', 'pw')).toBeUndefined();
    await service.upgradesSettled();
    expect(replaced).toEqual([]);
    expect(user.passwordHash).toBe(before);
  });

  it('leaves a hash as strong as the current parameters alone', async () => {
    const user = await memberHashedAt(12, 'pw');
    const { repository, replaced } = fakeRepository(user);
    const service = new UsersService(repository, new PasswordHasher(12), logger);
    expect(await service.verify('a@x.test', 'pw')).toBeDefined();
    await service.upgradesSettled();
    expect(replaced).toEqual([]);
  });

  it('upgrades a seeded member hashed under an older cost, and keeps a current one', async () => {
    const user = await memberHashedAt(11, 'pw');
    const { repository } = fakeRepository(user);
    const service = new UsersService(repository, new PasswordHasher(12), logger);
    await service.seed('usr_1', 'a@x.test', 'A', 'pw');
    expect(user.passwordHash).toMatch(/^scrypt\$4096\$/);
    const current = user.passwordHash;
    await service.seed('usr_1', 'a@x.test', 'A', 'pw');
    expect(user.passwordHash).toBe(current);
  });
});
