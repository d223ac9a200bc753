import { expect } from 'chai';
import { ConfigError, bool, describeConfig, int, list, loadConfig, oneOf, secret, str, url } from '@chainpipe/runtime';

describe('config', () => {
  const section = {
    PORT: int({ default: 8080, min: 1, max: 65535 }),
    DEBUG: bool({ default: false }),
    NAME: str(),
    TOKEN: secret(),
    MODE: oneOf(['a', 'b'] as const, { default: 'a' }),
    BROKERS: list({ default: ['127.0.0.1:9092'] }),
    ORIGIN: url({ default: 'https://example.org', protocols: ['https'] }),
  };

  it('applies defaults and converts types', () => {
    const c = loadConfig(section, { NAME: 'x', TOKEN: 't', PORT: '9000', DEBUG: 'yes', BROKERS: 'a:1, b:2' });
    expect(c).to.deep.equal({ PORT: 9000, DEBUG: true, NAME: 'x', TOKEN: 't', MODE: 'a', BROKERS: ['a:1', 'b:2'], ORIGIN: 'https://example.org' });
    expect(Object.isFrozen(c)).to.equal(true);
  });

  it('lists every bad variable at once', () => {
    let err: unknown;
    try {
      loadConfig(section, { PORT: '70000', DEBUG: 'maybe', MODE: 'c', ORIGIN: 'http://plain', BROKERS: ' , ' });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ConfigError);
    const problems = (err as ConfigError).problems;
    expect(problems).to.have.length(7);
    expect(problems.join('\n')).to.match(/PORT must be <= 65535, got 70000/)
      .and.match(/DEBUG must be a boolean/)
      .and.match(/NAME is required/)
      .and.match(/TOKEN is required/)
      .and.match(/MODE must be one of a, b/)
      .and.match(/ORIGIN must use one of https, got http/)
      .and.match(/BROKERS must list at least one value/);
  });

  it('rejects non-integers and unsafe integers', () => {
    expect(() => loadConfig({ N: int() }, { N: '1.5' })).to.throw(/N must be an integer/);
    expect(() => loadConfig({ N: int() }, { N: '99999999999999999999' })).to.throw(/safe integer/);
  });

  it('never prints secrets when describing a config', () => {
    const c = loadConfig(section, { NAME: 'x', TOKEN: 'hunter2' });
    const d = describeConfig(section, c);
    expect(d.TOKEN).to.equal('[redacted]');
    expect(JSON.stringify(d)).to.not.contain('hunter2');
  });
});
