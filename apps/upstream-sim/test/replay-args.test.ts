import { expect } from 'chai';
import { parseReplayArgs } from '../src/replay/args';

const env = { STREAM_SECRET: 'from-env', FIXTURES_DIR: '/fixtures' };

describe('replay command line', () => {
  it('defaults to chain-ingest on 8082, the env secret and the default set', () => {
    const parsed = parseReplayArgs([], env);
    expect(parsed).to.deep.equal({
      kind: 'run',
      options: {
        target: 'http://127.0.0.1:8082/stream',
        secret: 'from-env',
        network: undefined,
        files: [],
        all: false,
        gzip: false,
        dataset: undefined,
        signingToken: undefined,
        timeoutMs: undefined,
        fixturesDir: '/fixtures',
      },
    });
  });

  it('reads every flag, in both --flag value and --flag=value forms, and repeated --file', () => {
    const parsed = parseReplayArgs(
      ['--target', 'http://10.0.0.5:9000/tx/api/v1/stream', '--secret=S', '--network', 'Ethereum-Mainnet', '--file', 'a.json', '--file=b.json', '--gzip', '--all', '--dataset', 'block', '--qn-token', 'T', '--timeout-ms=500'],
      env,
    );
    if (parsed.kind !== 'run') throw new Error(JSON.stringify(parsed));
    expect(parsed.options).to.deep.include({
      target: 'http://10.0.0.5:9000/tx/api/v1/stream',
      secret: 'S',
      network: 'ethereum-mainnet',
      files: ['a.json', 'b.json'],
      all: true,
      gzip: true,
      dataset: 'block',
      signingToken: 'T',
      timeoutMs: 500,
    });
  });

  it('refuses what it cannot use, saying why', () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [['--bogus'], env, /unknown argument "--bogus"/],
      [['positional'], env, /unknown argument/],
      [['--file'], env, /--file needs a value/],
      [['--target', 'ftp://x/stream'], env, /http\(s\) URL/],
      [['--target', 'not a url'], env, /http\(s\) URL/],
      [[], { ...env, STREAM_SECRET: '' }, /no stream secret/],
      [['--network', 'dogecoin-mainnet'], env, /unknown network/],
      [['--timeout-ms', '0'], env, /positive integer/],
      [['--gzip=yes'], env, /takes no value/],
    ];
    for (const [argv, e, message] of cases) {
      const parsed = parseReplayArgs(argv, e as typeof env);
      expect(parsed.kind, argv.join(' ')).to.equal('error');
      expect((parsed as { message: string }).message).to.match(message);
    }
    expect(parseReplayArgs(['--all', '-h'], env)).to.deep.equal({ kind: 'help' });
  });
});
