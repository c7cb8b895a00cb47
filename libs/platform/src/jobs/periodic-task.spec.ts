import type { Logger } from 'pino';
import { PeriodicTask } from './periodic-task';

function recordingLogger() {
  const warnings: unknown[][] = [];
  return { warnings, logger: { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i += 1) await new Promise((r) => setTimeout(r, 5));
  expect(condition()).toBe(true);
}

describe('PeriodicTask', () => {
  it('runs again after a failed run, which it logs', async () => {
    const { warnings, logger } = recordingLogger();
    let runs = 0;
    const task = new PeriodicTask('test pruning', logger, 5, () => {
      runs += 1;
      return runs === 1 ? Promise.reject(new Error('database away')) : Promise.resolve();
    });
    task.start();
    await until(() => runs >= 3);
    await task.stop();
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings[0])).toContain('database away');
  });

  it('lets the run in progress finish on stop, and starts no other', async () => {
    const { logger } = recordingLogger();
    let runs = 0;
    let finished = 0;
    let release: () => void = () => undefined;
    const task = new PeriodicTask('test pruning', logger, 5, async () => {
      runs += 1;
      await new Promise<void>((resolve) => (release = resolve));
      finished += 1;
    });
    task.start();
    await until(() => runs === 1);
    const stopped = task.stop();
    expect(task.stopping).toBe(true);
    release();
    await stopped;
    expect(finished).toBe(1);
    await new Promise((r) => setTimeout(r, 40));
    expect(runs).toBe(1);
  });

  it('never runs when stopped before its first run', async () => {
    let runs = 0;
    const task = new PeriodicTask('test pruning', recordingLogger().logger, 5, () => {
      runs += 1;
      return Promise.resolve();
    });
    task.start();
    await task.stop();
    await new Promise((r) => setTimeout(r, 30));
    expect(runs).toBe(0);
  });
});
