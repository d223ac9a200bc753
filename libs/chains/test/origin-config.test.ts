import { expect } from 'chai';
import { chainOriginsFromConfig, KNOWN_NETWORK_NAMES } from '@chainpipe/chains';
import { ConfigError } from '@chainpipe/runtime';

describe('chain origins at boot', () => {
  const refusal = (config: { CHAIN_RPC_URLS: string; CHAIN_RPC_DEFAULT_BASE: string }): ConfigError => {
    try {
      chainOriginsFromConfig(config);
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      return err as ConfigError;
    }
    throw new Error('the config was accepted');
  };

  it('neither CHAIN_RPC_URLS nor CHAIN_RPC_DEFAULT_BASE: refuses, naming the base and every network', () => {
    const err = refusal({ CHAIN_RPC_URLS: '', CHAIN_RPC_DEFAULT_BASE: '' });
    expect(err.message).to.match(/^invalid configuration:\n {2}- CHAIN_RPC_DEFAULT_BASE is required: CHAIN_RPC_URLS names no origin for /);
    for (const network of ['ethereum-mainnet', 'solana-mainnet', 'tron-mainnet', 'bitcoin-mainnet', 'base-mainnet']) expect(err.message).to.include(network);
  });

  it('CHAIN_RPC_URLS without a base must cover every network: the missing ones are named, the listed ones not', () => {
    const err = refusal({ CHAIN_RPC_URLS: 'ethereum-mainnet=https://eth.example/rpc, solana-mainnet=https://sol.example', CHAIN_RPC_DEFAULT_BASE: '' });
    const missing = /names no origin for ([^(]+)/.exec(err.message)![1].trim().split(', ');
    expect(missing).to.include.members(['bsc-mainnet', 'tron-mainnet', 'bitcoin-mainnet']);
    expect(missing).to.not.include.members(['ethereum-mainnet']);
    expect(missing).to.not.include('solana-mainnet');
  });

  it('a malformed CHAIN_RPC_URLS entry is a config error too, named without its text (a URL there may carry a key)', () => {
    const keyed = 'https://x.quiknode.pro/0123abcdef456789/';
    const unpaired = refusal({ CHAIN_RPC_URLS: `bsc-mainnet=https://bsc.example,${keyed}`, CHAIN_RPC_DEFAULT_BASE: 'https://rpc.example' }).message;
    expect(unpaired).to.include('CHAIN_RPC_URLS entry 2 is not network=url');
    expect(unpaired).to.not.include('0123abcdef456789');
    const unparsable = refusal({ CHAIN_RPC_URLS: 'ethereum-mainnet=https://user:hunter2@[bad/0123abcdef456789', CHAIN_RPC_DEFAULT_BASE: 'https://rpc.example' }).message;
    expect(unparsable).to.include('CHAIN_RPC_URLS has no valid URL for ethereum-mainnet');
    expect(unparsable).to.not.match(/hunter2|0123abcdef456789/);
    expect(refusal({ CHAIN_RPC_URLS: 'moon-mainnet=https://x.example', CHAIN_RPC_DEFAULT_BASE: 'https://rpc.example' }).message).to.include('unknown network moon-mainnet');
  });

  it('a base serves every network not listed; listing every network needs no base', () => {
    const withBase = chainOriginsFromConfig({ CHAIN_RPC_URLS: 'ethereum-mainnet=https://eth.example/rpc', CHAIN_RPC_DEFAULT_BASE: 'https://rpc.example/v1/' });
    expect(withBase.urlFor('ethereum-mainnet')).to.equal('https://eth.example/rpc');
    expect(withBase.urlFor('tron-mainnet')).to.equal('https://rpc.example/v1/tron-mainnet');
    const listed = KNOWN_NETWORK_NAMES.map((n) => `${n}=https://${n}.example`).join(',');
    const all = chainOriginsFromConfig({ CHAIN_RPC_URLS: listed, CHAIN_RPC_DEFAULT_BASE: '' });
    expect(all.urlFor('bitcoin-mainnet')).to.equal('https://bitcoin-mainnet.example');
  });
});
