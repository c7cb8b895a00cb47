import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { NEST_APPS } from '@svc/contracts';

/** Every app refuses to start on a bad or missing variable, and says which one. */
jest.setTimeout(30_000);
const root = path.resolve(__dirname, '../..');

function start(app: string, env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const main = path.join(root, 'dist/apps', app, 'src/main.js');
  if (!existsSync(main))
    throw new Error(`${main} is missing: build first (npm test builds before the integration tests)`);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [main], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe('configuration validated at start-up', () => {
  it.each(NEST_APPS)('%s refuses to start without DATABASE_URL and names it', async (app) => {
    const { code, stderr } = await start(app, {
      PORT: '3999',
      AMQP_URL: 'amqp://localhost',
      REDIS_URL: 'redis://localhost',
    });
    expect(code).toBe(78);
    expect(stderr).toContain('DATABASE_URL is required');
  });

  it('names every bad variable at once', async () => {
    const { code, stderr } = await start('crew-api', {
      PORT: 'eighty',
      DATABASE_URL: 'mysql://localhost/db',
      AMQP_URL: 'amqp://localhost',
      REDIS_URL: 'redis://localhost',
      APP_ENV: 'production',
    });
    expect(code).toBe(78);
    expect(stderr).toContain('PORT must be an integer');
    expect(stderr).toContain('DATABASE_URL must use postgres or postgresql');
    // Production has no sandbox defaults: the internal token and public URLs must be given.
    expect(stderr).toContain('INTERNAL_API_TOKEN is required');
    expect(stderr).toContain('PUBLIC_BASE_URL is required');
  });

  it.each(NEST_APPS)('%s refuses an unknown trace sampler and a ratio outside 0..1', async (app) => {
    const { code, stderr } = await start(app, {
      PORT: '3999',
      APP_ENV: 'sandbox',
      DATABASE_URL: 'postgres://svc:svc@localhost:5432/svc',
      AMQP_URL: 'amqp://localhost',
      REDIS_URL: 'redis://localhost',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_TRACES_SAMPLER: 'parentbased_sometimes',
      OTEL_TRACES_SAMPLER_ARG: '2',
    });
    expect(code).toBe(78);
    expect(stderr).toContain(
      'OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio',
    );
    expect(stderr).toContain('OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got "2"');
  });

  // Safe by default: APP_ENV unset is production, which has no published secrets to fall back on.
  const services = {
    PORT: '3999',
    DATABASE_URL: 'postgres://svc:svc@localhost:5432/svc',
    AMQP_URL: 'amqp://localhost',
    REDIS_URL: 'redis://localhost',
    PUBLIC_BASE_URL: 'https://api.example.test',
  };

  it('crew-api without APP_ENV refuses to start without its secrets, naming each one', async () => {
    const { code, stderr } = await start('crew-api', services);
    expect(code).toBe(78);
    expect(stderr).toContain('INTERNAL_API_TOKEN is required');
    expect(stderr).toContain('CURSOR_SIGNING_KEY is required');
  });

  it('crew-api in production refuses the sandbox secrets and short ones', async () => {
    const { code, stderr } = await start('crew-api', {
      ...services,
      APP_ENV: 'production',
      INTERNAL_API_TOKEN: 'sandbox-internal-token',
      CURSOR_SIGNING_KEY: 'sandbox-only-cursor-signing-key-0123456789',
    });
    expect(code).toBe(78);
    expect(stderr).toContain('INTERNAL_API_TOKEN must be at least 32 characters');
    expect(stderr).toContain('CURSOR_SIGNING_KEY must not be a published sandbox value in production');
  });

  it('auth-server without APP_ENV refuses the sandbox sealing key and a key that is not 32 bytes', async () => {
    const sandboxKey = await start('auth-server', {
      ...services,
      SECRETS_ENCRYPTION_KEY: 'c2FuZGJveC1vbmx5LWtleS1mb3Itd2ViaG9vay1zZWM=',
    });
    expect(sandboxKey.code).toBe(78);
    expect(sandboxKey.stderr).toContain('SECRETS_ENCRYPTION_KEY must not be a published sandbox value');
    const shortKey = await start('auth-server', {
      ...services,
      SECRETS_ENCRYPTION_KEY: Buffer.alloc(40, 7).toString('base64'),
    });
    expect(shortKey.code).toBe(78);
    expect(shortKey.stderr).toContain('SECRETS_ENCRYPTION_KEY must be base64 of exactly 32 bytes');
  });
});
