import { trendLastModified } from './sea-time.service';

describe('trendLastModified', () => {
  it('is the record time, or the start of the current month when later', () => {
    expect(trendLastModified('2026-03-10T08:00:00.000Z', '2026-03').toISOString()).toBe(
      '2026-03-10T08:00:00.000Z',
    );
    expect(trendLastModified('2026-01-10T08:00:00.000Z', '2026-03').toISOString()).toBe(
      '2026-03-01T00:00:00.000Z',
    );
  });
});
