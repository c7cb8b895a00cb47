import { prepareCommands } from './system';

/** What an e2e system runs before its apps start: everything once per database, then one seed. */
describe('startSystem prepare', () => {
  const apps = ['auth-server', 'consent-ui', 'crew-api'];

  it('migrates every app, then seeds every app, on a database no system of the run prepared', () => {
    expect(prepareCommands(apps, false)).toEqual([
      ['auth-server', 'migrate'],
      ['consent-ui', 'migrate'],
      ['crew-api', 'migrate'],
      ['auth-server', 'seed'],
      ['consent-ui', 'seed'],
      ['crew-api', 'seed'],
    ]);
  });

  it("runs only auth-server's seed on a prepared one, and nothing without auth-server", () => {
    expect(prepareCommands(apps, true)).toEqual([['auth-server', 'seed']]);
    expect(prepareCommands(['crew-api', 'sponsorship-api'], true)).toEqual([]);
  });
});
