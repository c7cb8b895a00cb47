import { Injectable } from '@nestjs/common';

export type ReadinessCheck = () => Promise<void>;

export interface ReadinessReport {
  readonly ready: boolean;
  readonly draining: boolean;
  readonly checks: Record<string, { ok: boolean; error?: string }>;
}

/**
 * What `/readyz` asks. Each module that owns a dependency (database, Redis, RabbitMQ) registers
 * one check; a check that takes longer than the budget counts as failed, so a stuck dependency
 * takes the pod out of rotation instead of hanging the probe.
 */
@Injectable()
export class ReadinessRegistry {
  private readonly checks = new Map<string, ReadinessCheck>();
  private draining = false;

  register(name: string, check: ReadinessCheck): void {
    this.checks.set(name, check);
  }

  startDraining(): void {
    this.draining = true;
  }

  async report(budgetMs = 2000): Promise<ReadinessReport> {
    const entries = await Promise.all(
      [...this.checks].map(async ([name, check]) => {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            check(),
            new Promise<never>((_, reject) => {
              timer = setTimeout(() => reject(new Error(`no answer within ${budgetMs} ms`)), budgetMs);
            }),
          ]);
          return [name, { ok: true }] as const;
        } catch (err) {
          return [name, { ok: false, error: err instanceof Error ? err.message : String(err) }] as const;
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    const checks = Object.fromEntries(entries);
    const ready = !this.draining && entries.every(([, r]) => r.ok);
    return { ready, draining: this.draining, checks };
  }
}
