import type { Logger } from 'pino';
import { PeriodicTask, PeriodicWork } from './periodic-task';

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

describe('PeriodicWork', () => {
  class Counting extends PeriodicWork {
    runs = 0;
    constructor(private readonly on: boolean) {
      super('test work', recordingLogger().logger, 5);
    }
    protected override enabled(): boolean {
      return this.on;
    }
    protected runOnce(): Promise<void> {
      this.runs += 1;
      return Promise.resolve();
    }
  }

  it('runs with the app and stops before it shuts down', async () => {
    const work = new Counting(true);
    work.onApplicationBootstrap();
    await until(() => work.runs >= 2);
    await work.beforeApplicationShutdown();
    const runs = work.runs;
    await new Promise((r) => setTimeout(r, 30));
    expect(work.runs).toBe(runs);
  });

  it('never runs when switched off', async () => {
    const work = new Counting(false);
    work.onApplicationBootstrap();
    await new Promise((r) => setTimeout(r, 30));
    await work.beforeApplicationShutdown();
    expect(work.runs).toBe(0);
  });
});
