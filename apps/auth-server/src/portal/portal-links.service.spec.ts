import { frameOrigins } from './portal-links.service';

describe('frameOrigins: who may frame a partner’s portal', () => {
  it('is the distinct origins of the registered redirect URIs, ports and schemes kept', () => {
    expect(
      frameOrigins([
        'http://localhost:8765/callback',
        'http://127.0.0.1:8765/callback',
        'https://partner.example/callback',
        'https://partner.example/other',
        'https://partner.example:8443/callback',
      ]),
    ).toEqual([
      'http://localhost:8765',
      'http://127.0.0.1:8765',
      'https://partner.example',
      'https://partner.example:8443',
    ]);
  });

  it('drops what is not a URL or has no origin, so nothing unexpected can frame it', () => {
    expect(frameOrigins(['not a url', 'data:text/html,x', 'https://ok.example/cb'])).toEqual([
      'https://ok.example',
    ]);
    expect(frameOrigins([])).toEqual([]);
  });
});
