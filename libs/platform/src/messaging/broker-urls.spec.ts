import { brokerUrls, brokerUserOf } from './amqp-connection';

describe('brokerUrls: the nodes of a RabbitMQ cluster in AMQP_URL', () => {
  it('keeps one URL as it is, its vhost included', () => {
    expect(brokerUrls('amqp://svc:pw@rabbitmq:5672/crew')).toEqual(['amqp://svc:pw@rabbitmq:5672/crew']);
  });

  it('splits URLs separated by commas, each with its own credentials and vhost', () => {
    const url = 'amqp://svc:p%2Cw@a:5672/crew,amqp://svc:p%2Cw@b:5673/crew,amqps://svc:p%2Cw@c:5671/crew';
    expect(brokerUrls(url)).toEqual([
      'amqp://svc:p%2Cw@a:5672/crew',
      'amqp://svc:p%2Cw@b:5673/crew',
      'amqps://svc:p%2Cw@c:5671/crew',
    ]);
    expect(brokerUserOf(brokerUrls(url)[0])).toBe('svc');
  });

  it('does not split at a comma inside a vhost or a query', () => {
    expect(brokerUrls('amqp://svc:pw@a:5672/crew?heartbeat=5,x')).toEqual([
      'amqp://svc:pw@a:5672/crew?heartbeat=5,x',
    ]);
  });
});
