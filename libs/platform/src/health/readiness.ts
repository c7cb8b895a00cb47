import { Injectable } from '@nestjs/common';

export type ReadinessCheck = () => Promise<void>;

export interface DependencyState {
  readonly ok: boolean;
  readonly error?: string;
  /** When the current failure began (ISO 8601); absent while the dependency answers. */
  readonly failing_since?: string;
}

export interface ReadinessReport {
  readonly ready: boolean;
  readonly draining: boolean;
  /** ready, but at least one dependency fails now. */
  readonly degraded: boolean;
  readonly checks: Record<string, DependencyState>;
}

/**
 * What `/readyz` asks (docs/architecture.md, "Readiness and shared dependencies"): one check per
 * dependency, a slow one failed. Ready once every dependency has answered once, until draining;
 * a later failure is only reported, since a shared dependency would take the whole fleet out.
 */
@Injectable()
export class ReadinessRegistry {
  private readonly checks = new Map<string, ReadinessCheck>();
  private readonly answeredOnce = new Set<string>();
  private readonly failingSince = new Map<string, number>();
  /** From SIGTERM on: readiness fails and every answer closes its connection (runHttpApp). */
  draining = false;

  constructor(private readonly now: () => number = Date.now) {}

  register(name: string, check: ReadinessCheck): void {
    this.checks.set(name, check);
  }

  startDraining(): void {
    this.draining = true;
  }

  async report(budgetMs = 2000): Promise<ReadinessReport> {
    const entries = await Promise.all(
      [...this.checks].map(async ([name, check]) => [name, await this.run(name, check, budgetMs)] as const),
    );
    const checks = Object.fromEntries(entries);
    const started = [...this.checks.keys()].every((name) => this.answeredOnce.has(name));
    const degraded = entries.some(([, state]) => !state.ok);
    return { ready: started && !this.draining, draining: this.draining, degraded, checks };
  }

  private async run(name: string, check: ReadinessCheck, budgetMs: number): Promise<DependencyState> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        check(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${budgetMs} ms`)), budgetMs);
        }),
      ]);
      this.answeredOnce.add(name);
      this.failingSince.delete(name);
      return { ok: true };
    } catch (err) {
      const since = this.failingSince.get(name) ?? this.now();
      this.failingSince.set(name, since);
      return {
        ok: false,
        error: err instanceof Error ? err.message : String(err),
        failing_since: new Date(since).toISOString(),
      };
    } finally {
      clearTimeout(timer);
    }
  }
}
