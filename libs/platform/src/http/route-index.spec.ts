import { RouteIndex } from './route-index';

describe('RouteIndex', () => {
  const index = new RouteIndex();
  index.add('GET', '/v1/partners/sponsorships');
  index.add(['GET', 'HEAD'], '/v1/partners/sponsorships/:id');
  index.add('DELETE', '/v1/partners/sponsorships/:id');
  index.add('POST', '/v1/partners/sponsorships');

  it('lists methods of a concrete path, parameters included', () => {
    expect(index.allowedMethods('/v1/partners/sponsorships/sps_123')).toEqual(['DELETE', 'GET', 'HEAD']);
    expect(index.allowedMethods('/v1/partners/sponsorships')).toEqual(['GET', 'POST']);
  });

  it('knows nothing of other paths', () => {
    expect(index.allowedMethods('/v1/partners/sponsorships/a/b')).toEqual([]);
    expect(index.allowedMethods('/v1/partners')).toEqual([]);
  });
});
