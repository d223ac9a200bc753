import { expect } from 'chai';
import { ConfigError, bool, describeConfig, int, list, loadConfig, maskUrlCredentials, oneOf, secret, str, url } from '@chainpipe/runtime';

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

  describe('credentials of URLs (one rule for the boot line and config errors)', () => {
    // Keys of the forms node providers issue, and a Redis password.
    const QUICKNODE = 'https://dry-snowy-sea.quiknode.pro/4f2a9c1e7b3d8a6f0e5c2b9d1a7f3e8c6b4d2a0f/';
    const INFURA = 'https://mainnet.infura.io/v3/9aa3d95b3bc440fa88ea12eaa4456161';
    const ALCHEMY = 'https://eth-mainnet.g.alchemy.com/v2/DqLkWpZrTfYvBnMxHsJgCeAuQoRiEtPa';
    const QUERY = 'https://api.trongrid.io/jsonrpc?apikey=25f66928-0b70-48cd-9ac6-da6f8247c663&network=mainnet';
    const REDIS = 'redis://default:s3cr3t-R3dis-pw@10.0.0.5:6379/0';
    const secrets = ['4f2a9c1e7b3d8a6f0e5c2b9d1a7f3e8c6b4d2a0f', '9aa3d95b3bc440fa88ea12eaa4456161', 'DqLkWpZrTfYvBnMxHsJgCeAuQoRiEtPa', '25f66928-0b70-48cd-9ac6-da6f8247c663', 's3cr3t-R3dis-pw'];

    it('masks userinfo passwords, key-like path segments and credential query values, and keeps the rest readable', () => {
      expect(maskUrlCredentials(QUICKNODE)).to.equal('https://dry-snowy-sea.quiknode.pro/***/');
      expect(maskUrlCredentials(INFURA)).to.equal('https://mainnet.infura.io/v3/***');
      expect(maskUrlCredentials(ALCHEMY)).to.equal('https://eth-mainnet.g.alchemy.com/v2/***');
      expect(maskUrlCredentials(QUERY)).to.equal('https://api.trongrid.io/jsonrpc?apikey=***&network=mainnet');
      expect(maskUrlCredentials(REDIS)).to.equal('redis://default:***@10.0.0.5:6379/0');
      expect(maskUrlCredentials('https://4f2a9c1e7b3d8a6f@node.example/rpc')).to.equal('https://***@node.example/rpc');
      expect(maskUrlCredentials('postgres://chainpipe:chainpipe@127.0.0.1:5432/chainpipe?sslmode=require')).to.equal('postgres://chainpipe:***@127.0.0.1:5432/chainpipe?sslmode=require');
      // Nothing secret: unchanged.
      for (const plain of ['http://127.0.0.1:8090/rpc/ethereum-mainnet', 'http://127.0.0.1:8090/coingecko/api/v3', 'kafka:9092,kafka2:9092', 'not a url']) expect(maskUrlCredentials(plain)).to.equal(plain);
      // A network=url list is one string.
      expect(maskUrlCredentials(`ethereum-mainnet=${QUICKNODE},bsc-mainnet=http://bsc.example/rpc`)).to.equal('ethereum-mainnet=https://dry-snowy-sea.quiknode.pro/***/,bsc-mainnet=http://bsc.example/rpc');
    });

    it('the boot line (describeConfig) and a refused URL (ConfigError) never show a provider key or a Redis password', () => {
      const nodes = { RPC: str(), BASE: url(), REDIS_URL: url({ protocols: ['redis', 'rediss'] }), PEERS: list(), PORT: int({ default: 1 }) };
      const env = { RPC: `ethereum-mainnet=${QUICKNODE},tron-mainnet=${QUERY}`, BASE: INFURA, REDIS_URL: REDIS, PEERS: `${ALCHEMY},http://peer.example` };
      const line = JSON.stringify(describeConfig(nodes, loadConfig(nodes, env)));
      for (const s of secrets) expect(line).to.not.contain(s);
      expect(line).to.contain('dry-snowy-sea.quiknode.pro').and.contain('10.0.0.5:6379').and.contain('http://peer.example');

      const unparsable = { BASE: url(), REDIS_URL: url(), CACHE_URL: url() };
      let refused: unknown;
      try {
        loadConfig(unparsable, { BASE: 'https://user:hunter2pass@[broken/4f2a9c1e7b3d8a6f0e5c2b9d1a7f3e8c', REDIS_URL: 'redis://default:s3cr3t-R3dis-pw@10.0.0.5:port', CACHE_URL: ':s3cr3t-R3dis-pw@10.0.0.5' });
      } catch (err) {
        refused = err;
      }
      expect(refused).to.be.instanceOf(ConfigError);
      const text = (refused as ConfigError).message;
      expect(text).to.contain('BASE must be a URL, got "https://user:***@[broken/***"');
      expect(text).to.contain('REDIS_URL must be a URL, got "redis://default:***@10.0.0.5:port"');
      expect(text).to.contain('CACHE_URL must be a URL (the value is not shown)');
      for (const s of ['hunter2pass', '4f2a9c1e7b3d8a6f0e5c2b9d1a7f3e8c', 's3cr3t-R3dis-pw']) expect(text).to.not.contain(s);
      // A field of another kind that names a URL in its error is masked by the same rule.
      const other = { MODE: oneOf(['a', 'b'] as const) };
      expect(() => loadConfig(other, { MODE: REDIS })).to.throw(ConfigError).that.satisfies((e: Error) => !e.message.includes('s3cr3t-R3dis-pw'));
    });
  });
});
