import { AppMetrics, type Transaction } from '@svc/platform';
import type { Logger } from 'pino';
import type { SponsorshipApiConfig } from '../config';
import type { ProbeBudgetRepository } from './probe-budget.repository';
import { ProbeBudgetService } from './probe-budget.service';
import { SeatsException } from './seats.exception';

const TX = {} as Transaction;

function setup(wait: number | undefined, inWindow = 7) {
  const asked: { clientId: string; budget: number }[] = [];
  const repository = {
    secondsUntilOpen: (_tx: Transaction, clientId: string, budget: number) => {
      asked.push({ clientId, budget });
      return Promise.resolve(wait);
    },
    countInWindow: () => Promise.resolve(inWindow),
  } as unknown as ProbeBudgetRepository;
  const logged: { fields: Record<string, unknown>; message: string }[] = [];
  const logger = {
    warn: (fields: Record<string, unknown>, message: string) => logged.push({ fields, message }),
  } as unknown as Logger;
  const metrics = new AppMetrics('sponsorship-api');
  const config = { SPONSORSHIP_PROBE_BUDGET_PER_DAY: 5 } as SponsorshipApiConfig;
  return { service: new ProbeBudgetService(repository, config, logger, metrics), asked, logged, metrics };
}

async function refusals(metrics: AppMetrics): Promise<string | undefined> {
  return (await metrics.render())
    .split('\n')
    .find((l) => l.startsWith('sponsorship_probe_budget_refusals_total'));
}

describe('ProbeBudgetService', () => {
  it('lets the provision through while the budget is open, counting nothing', async () => {
    const { service, asked, logged, metrics } = setup(undefined);
    await expect(service.assertOpen(TX, 'partner-a')).resolves.toBeUndefined();
    expect(asked).toEqual([{ clientId: 'partner-a', budget: 5 }]);
    expect(logged).toEqual([]);
    expect(await refusals(metrics)).toMatch(/ 0$/);
  });

  it('refuses with the wait rounded up to whole seconds (at least 1), counts it and logs the partner and counts only', async () => {
    const { service, logged, metrics } = setup(41.2);
    const err = await service.assertOpen(TX, 'partner-a').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SeatsException);
    expect(err).toMatchObject({ code: 'probe_budget_exceeded', retryAfterSeconds: 42 });
    expect(await refusals(metrics)).toMatch(/ 1$/);
    expect(logged).toHaveLength(1);
    expect(logged[0].fields).toEqual({
      client_id: 'partner-a',
      probes_in_window: 7,
      budget: 5,
      retry_after_s: 42,
    });

    const soon = setup(0.01);
    await expect(soon.service.assertOpen(TX, 'p')).rejects.toMatchObject({ retryAfterSeconds: 1 });
  });
});
