import {
  AMQP_CONFIG,
  BASE_CONFIG,
  ConfigError,
  DATABASE_CONFIG,
  MIGRATION_CONFIG,
  durationList,
  int,
  loadConfig,
  OUTBOX_CONFIG,
  parseDuration,
  REDIS_CONFIG,
  secret,
} from './config';
import { cacheRedisConfig } from '../redis/redis-client';

const spec = {
  ...BASE_CONFIG,
  ...DATABASE_CONFIG,
  RETRIES: durationList('retry schedule', { default: '1m,5m' }),
};

describe('loadConfig', () => {
  const valid = { APP_ENV: 'sandbox', PORT: '3002', DATABASE_URL: 'postgres://u:p@localhost:5432/db' };

  it('is production unless APP_ENV says sandbox, so a forgotten variable never gets sandbox defaults', () => {
    const { APP_ENV: _sandbox, ...unset } = valid;
    expect(() => loadConfig(spec, unset)).toThrow(/PUBLIC_BASE_URL is required/);
    const config = loadConfig(spec, { ...unset, PUBLIC_BASE_URL: 'https://api.example.test' });
    expect(config.APP_ENV).toBe('production');
    expect(() => loadConfig(spec, { ...valid, APP_ENV: 'staging' })).toThrow(
      /APP_ENV must be one of sandbox, production/,
    );
  });

  it('applies defaults and sandbox defaults', () => {
    const config = loadConfig(spec, valid);
    expect(config.APP_ENV).toBe('sandbox');
    expect(config.PORT).toBe(3002);
    expect(config.DOCS_URL).toBe('http://localhost:8080/docs');
    expect(config.RETRIES).toEqual([60_000, 300_000]);
  });

  it('names every missing or bad variable', () => {
    let error: unknown;
    try {
      loadConfig(spec, { APP_ENV: 'sandbox', PORT: 'eighty', DATABASE_URL: 'mysql://x' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const names = (error as ConfigError).problems.map((p) => p.variable);
    expect(names).toEqual(['PORT', 'DATABASE_URL']);
    expect((error as ConfigError).message).toContain('PORT must be an integer');
  });

  it('defaults DOCS_URL to the gateway’s own /docs under PUBLIC_BASE_URL, in both environments', () => {
    expect(loadConfig(spec, { ...valid, PUBLIC_BASE_URL: 'https://sandbox.example.test/' }).DOCS_URL).toBe(
      'https://sandbox.example.test/docs',
    );
    const production = { ...valid, APP_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.test' };
    expect(loadConfig(spec, production).DOCS_URL).toBe('https://api.example.test/docs');
    expect(loadConfig(spec, { ...production, DOCS_URL: 'https://docs.example.test' }).DOCS_URL).toBe(
      'https://docs.example.test',
    );
  });

  it('has no sandbox defaults in production', () => {
    expect(() => loadConfig(spec, { ...valid, APP_ENV: 'production' })).toThrow(
      /PUBLIC_BASE_URL is required/,
    );
  });

  it('rejects an unknown APP_ENV', () => {
    expect(() => loadConfig(spec, { ...valid, APP_ENV: 'staging' })).toThrow(
      /APP_ENV must be one of sandbox, production/,
    );
  });

  it('enforces integer ranges', () => {
    expect(() => loadConfig({ N: int('n', { min: 1 }) }, { N: '0' })).toThrow(/N must be >= 1/);
  });

  it('keeps published outbox messages 7 days unless told otherwise, 0 meaning for ever', () => {
    expect(loadConfig(OUTBOX_CONFIG, {}).OUTBOX_RETENTION_DAYS).toBe(7);
    expect(loadConfig(OUTBOX_CONFIG, { OUTBOX_RETENTION_DAYS: '0' }).OUTBOX_RETENTION_DAYS).toBe(0);
    expect(() => loadConfig(OUTBOX_CONFIG, { OUTBOX_RETENTION_DAYS: '-1' })).toThrow(
      /OUTBOX_RETENTION_DAYS must be >= 0/,
    );
    expect(() => loadConfig(OUTBOX_CONFIG, { OUTBOX_RETENTION_DAYS: 'a week' })).toThrow(
      /OUTBOX_RETENTION_DAYS must be an integer/,
    );
  });

  it('parses durations', () => {
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(() => parseDuration('2 hours')).toThrow(/not a duration/);
  });
});

describe('METRICS_PORT', () => {
  const valid = { APP_ENV: 'sandbox', PORT: '3002', DATABASE_URL: 'postgres://u:p@localhost:5432/db' };

  it('defaults to 9464, takes 0 for a free port, and refuses the API port', () => {
    expect(loadConfig(spec, valid).METRICS_PORT).toBe(9464);
    expect(loadConfig(spec, { ...valid, METRICS_PORT: '0' }).METRICS_PORT).toBe(0);
    expect(loadConfig(spec, { ...valid, METRICS_PORT: '9302' }).METRICS_PORT).toBe(9302);
    expect(() => loadConfig(spec, { ...valid, METRICS_PORT: '3002' })).toThrow(
      /METRICS_PORT must differ from PORT/,
    );
    expect(() => loadConfig(spec, { ...valid, METRICS_PORT: '70000' })).toThrow(
      /METRICS_PORT must be <= 65535/,
    );
  });
});

describe('RPC_TIMEOUT_MS', () => {
  it('defaults below the 3 s answer budget, so a request waiting on one RPC still answers in time', () => {
    const config = loadConfig(AMQP_CONFIG, { AMQP_URL: 'amqp://guest:guest@localhost:5672/' });
    expect(config.RPC_TIMEOUT_MS).toBe(2000);
    expect(config.RPC_TIMEOUT_MS).toBeLessThan(3000);
  });
});

describe('REDIS_CONFIG: one of three topologies', () => {
  const load = (env: Record<string, string>) => loadConfig(REDIS_CONFIG, env);
  const problems = (env: Record<string, string>) => {
    try {
      load(env);
    } catch (err) {
      return (err as ConfigError).problems;
    }
    return [];
  };

  it('takes a single URL', () => {
    expect(load({ REDIS_URL: 'redis://:pw@cache:6380/2' })).toMatchObject({
      REDIS_URL: 'redis://:pw@cache:6380/2',
      REDIS_SENTINELS: undefined,
      REDIS_CLUSTER_NODES: undefined,
      REDIS_KEY_PREFIX: '',
    });
  });

  it('takes a Sentinel set with its master group (mymaster by default) and the nodes’ password', () => {
    const config = load({ REDIS_SENTINELS: 's1:26379, s2:26380,[::1]:26381', REDIS_PASSWORD: 'pw' });
    expect(config.REDIS_URL).toBeUndefined();
    expect(config.REDIS_SENTINELS).toEqual([
      { host: 's1', port: 26379 },
      { host: 's2', port: 26380 },
      { host: '::1', port: 26381 },
    ]);
    expect(config.REDIS_SENTINEL_MASTER).toBe('mymaster');
    expect(config.REDIS_PASSWORD).toBe('pw');
    expect(load({ REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_MASTER: 'cache' }).REDIS_SENTINEL_MASTER).toBe(
      'cache',
    );
  });

  it('takes Cluster seed nodes', () => {
    expect(load({ REDIS_CLUSTER_NODES: 'n1:7000,n2:7001' }).REDIS_CLUSTER_NODES).toEqual([
      { host: 'n1', port: 7000 },
      { host: 'n2', port: 7001 },
    ]);
  });

  it('requires exactly one of the three, naming them, and never quotes a URL (it may hold a password)', () => {
    expect(problems({})).toEqual([
      {
        variable: 'REDIS_URL',
        reason: 'is required, or REDIS_SENTINELS or REDIS_CLUSTER_NODES (exactly one of them)',
      },
    ]);
    const both = problems({ REDIS_URL: 'redis://:secret-pw@cache', REDIS_CLUSTER_NODES: 'n1:7000' });
    expect(both).toHaveLength(1);
    expect(both[0].reason).toContain('set exactly one of REDIS_URL, REDIS_SENTINELS, REDIS_CLUSTER_NODES');
    expect(JSON.stringify(both)).not.toContain('secret-pw');
  });

  it('rejects a malformed address list', () => {
    expect(problems({ REDIS_SENTINELS: 's1:26379,s2' })).toEqual([
      { variable: 'REDIS_SENTINELS', reason: '"s2" is not host:port' },
    ]);
    expect(problems({ REDIS_CLUSTER_NODES: 'n1:99999' })[0].variable).toBe('REDIS_CLUSTER_NODES');
  });

  it('refuses a key prefix with a brace: Redis Cluster would take it for the keys’ hash tag', () => {
    expect(load({ REDIS_URL: 'redis://cache', REDIS_KEY_PREFIX: 'production:' }).REDIS_KEY_PREFIX).toBe(
      'production:',
    );
    expect(problems({ REDIS_URL: 'redis://cache', REDIS_KEY_PREFIX: 'prod{1}:' })[0].variable).toBe(
      'REDIS_KEY_PREFIX',
    );
  });
});

describe('REDIS_CACHE_*: the token cache’s own Redis, or the state Redis', () => {
  const state = { REDIS_URL: 'redis://state:6379' };
  const load = (env: Record<string, string>) => loadConfig(REDIS_CONFIG, { ...state, ...env });

  it('shares the state Redis when no cache topology is set', () => {
    const config = load({});
    expect(cacheRedisConfig(config)).toBeUndefined();
  });

  it('takes any of the three topologies, with the state Redis’s key prefix', () => {
    expect(
      cacheRedisConfig(load({ REDIS_CACHE_URL: 'redis://cache:6380', REDIS_KEY_PREFIX: 'p:' })),
    ).toMatchObject({
      REDIS_URL: 'redis://cache:6380',
      REDIS_KEY_PREFIX: 'p:',
    });
    expect(
      cacheRedisConfig(load({ REDIS_CACHE_SENTINELS: 'c1:26379', REDIS_CACHE_PASSWORD: 'pw' })),
    ).toMatchObject({
      REDIS_URL: undefined,
      REDIS_SENTINELS: [{ host: 'c1', port: 26379 }],
      REDIS_SENTINEL_MASTER: 'mymaster',
      REDIS_PASSWORD: 'pw',
    });
    expect(cacheRedisConfig(load({ REDIS_CACHE_CLUSTER_NODES: 'c1:7000' }))?.REDIS_CLUSTER_NODES).toEqual([
      { host: 'c1', port: 7000 },
    ]);
  });

  it('refuses two cache topologies at once, naming REDIS_CACHE_URL once and never quoting it', () => {
    let problems: ConfigError['problems'] = [];
    try {
      load({ REDIS_CACHE_URL: 'redis://:secret-pw@cache', REDIS_CACHE_CLUSTER_NODES: 'c1:7000' });
    } catch (err) {
      problems = (err as ConfigError).problems;
    }
    expect(problems).toHaveLength(1);
    expect(problems[0].variable).toBe('REDIS_CACHE_URL');
    expect(JSON.stringify(problems)).not.toContain('secret-pw');
  });
});

describe('secret', () => {
  const spec = { TOKEN: secret('a bearer token', { sandboxDefault: 'sandbox-token', minLength: 32 }) };
  const production = { APP_ENV: 'production' };

  it('falls back to its published value only in sandbox', () => {
    expect(loadConfig(spec, { APP_ENV: 'sandbox' }).TOKEN).toBe('sandbox-token');
    expect(() => loadConfig(spec, production)).toThrow(/TOKEN is required/);
  });

  it('refuses in production a value shorter than its minimum', () => {
    expect(() => loadConfig(spec, { ...production, TOKEN: 'x'.repeat(31) })).toThrow(
      /TOKEN must be at least 32 characters/,
    );
    expect(loadConfig(spec, { ...production, TOKEN: 'x'.repeat(32) }).TOKEN).toBe('x'.repeat(32));
  });

  it.each(['sandbox-token', 'sandbox-secret', 'whsec_sandbox_secret', 'sandbox-password'])(
    'refuses in production the published sandbox value %s',
    (value) => {
      const long = secret('a key', { sandboxDefault: 'sandbox-token', minLength: 1 });
      expect(() => loadConfig({ KEY: long }, { ...production, KEY: value })).toThrow(
        /KEY must not be a published sandbox value in production/,
      );
    },
  );

  it('runs its own check in every environment', () => {
    const checked = secret('a key', {
      sandboxDefault: 'sandbox-token',
      minLength: 1,
      check: (v) => {
        if (!v.startsWith('k')) throw new Error('must start with k');
      },
    });
    expect(() => loadConfig({ KEY: checked }, { APP_ENV: 'sandbox', KEY: 'abc' })).toThrow(
      /KEY must start with k/,
    );
  });
});

describe('least privilege settings', () => {
  it('refuses a published sandbox connection password in production only', () => {
    const urls = {
      DATABASE_URL: 'postgres://svc_crew:sandbox-postgres-crew-password@db:5432/svc',
      AMQP_URL: 'amqp://svc-crew-api:sandbox-rabbitmq-crew-api-password@mq:5672/sandbox',
    };
    const spec = { ...BASE_CONFIG, ...DATABASE_CONFIG, ...AMQP_CONFIG };
    let message = '';
    try {
      loadConfig(spec, { PORT: '1', APP_ENV: 'production', PUBLIC_BASE_URL: 'https://api.test', ...urls });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/DATABASE_URL.*published sandbox password/);
    expect(message).toMatch(/AMQP_URL.*published sandbox password/);
    expect(message).not.toContain('sandbox-postgres-crew-password');
    expect(
      loadConfig(spec, { PORT: '1', APP_ENV: 'sandbox', DOCS_URL: 'https://d.test/docs', ...urls })
        .DATABASE_URL,
    ).toBe(urls.DATABASE_URL);
    const own = {
      DATABASE_URL: 'postgres://crew:Zx81-long-random@db/crew',
      AMQP_URL: 'amqp://svc-crew-api:Q9-random@mq/prod',
    };
    expect(
      loadConfig(spec, { PORT: '1', APP_ENV: 'production', PUBLIC_BASE_URL: 'https://api.test', ...own })
        .AMQP_URL,
    ).toBe(own.AMQP_URL);
  });

  it("takes the app's role for the migrations' grant as a lower-case role name, or none", () => {
    expect(loadConfig(MIGRATION_CONFIG, { DATABASE_APP_ROLE: 'svc_crew' }).DATABASE_APP_ROLE).toBe(
      'svc_crew',
    );
    expect(loadConfig(MIGRATION_CONFIG, {}).DATABASE_APP_ROLE).toBeUndefined();
    expect(() => loadConfig(MIGRATION_CONFIG, { DATABASE_APP_ROLE: 'crew"; DROP ROLE x; --' })).toThrow(
      /DATABASE_APP_ROLE/,
    );
  });

  it('exposes the defaults it applies and which variables are secret, for the configuration reference', () => {
    expect(BASE_CONFIG.LOG_LEVEL).toMatchObject({ default: 'info' });
    expect(spec.RETRIES).toMatchObject({ default: '1m,5m' });
    expect(BASE_CONFIG.PUBLIC_BASE_URL).toMatchObject({ sandboxDefault: 'http://localhost:8080' });
    expect(BASE_CONFIG.PUBLIC_BASE_URL.default).toBeUndefined();
    expect(DATABASE_CONFIG.DATABASE_POOL_SIZE).not.toHaveProperty('min');
    const key = secret('a key', { sandboxDefault: 'sandbox-key-0123456789-0123456789', minLength: 32 });
    expect(key).toMatchObject({ sandboxDefault: 'sandbox-key-0123456789-0123456789', secret: true });
    expect(key.default).toBeUndefined();
    expect(DATABASE_CONFIG.DATABASE_URL.secret).toBe(true);
    expect(REDIS_CONFIG.REDIS_PASSWORD.secret).toBe(true);
    expect(BASE_CONFIG.PORT.secret).toBeUndefined();
  });
});
