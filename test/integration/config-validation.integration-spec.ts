import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { NEST_APPS } from '@svc/contracts';

/** Every app refuses to start on a bad or missing variable, and says which one. */
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
});
