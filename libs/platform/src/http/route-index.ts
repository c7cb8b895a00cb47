/** Every route an app registered: the filter tells 404 from 405 with `Allow`; tests list what an app serves. */
export class RouteIndex {
  private readonly routes: { method: string; url: string; pattern: RegExp }[] = [];

  add(method: string | string[], url: string): void {
    for (const m of Array.isArray(method) ? method : [method]) {
      this.routes.push({ method: m.toUpperCase(), url, pattern: RouteIndex.toRegExp(url) });
    }
  }

  list(): { method: string; url: string }[] {
    return this.routes.map(({ method, url }) => ({ method, url }));
  }

  /** Methods registered for a concrete path; empty when the path is unknown. */
  allowedMethods(path: string): string[] {
    const methods = new Set(this.routes.filter((r) => r.pattern.test(path)).map((r) => r.method));
    return [...methods].sort();
  }

  private static toRegExp(url: string): RegExp {
    const body = url
      .split('/')
      .map((segment) => {
        if (segment === '*') return '.*';
        if (segment.startsWith(':')) return '[^/]+';
        return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      })
      .join('/');
    return new RegExp(`^${body}/?$`);
  }
}
