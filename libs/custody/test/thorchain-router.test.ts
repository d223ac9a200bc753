import { expect } from 'chai';
import { decodeFunctionData, erc20Abi } from 'viem';
import { ConfigError } from '@chainpipe/runtime';
import { DepositAddresses, HttpSigner, MnemonicSigner, THORCHAIN_ROUTER_ABI, accountXpubsOf, approveCalldata, checkSignerOwnsDepositKeys, routerDepositCalldata, signerFromConfig } from '../src';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

describe("THORChain router calldata", () => {
  const vault = '0x1111111111111111111111111111111111111111';
  const router = '0x2222222222222222222222222222222222222222';
  const usdt = '0xdAC17F958D2ee523a2206206994597C13D831ec7';

  it('depositWithExpiry(vault, asset, amount, memo, expiry) under the router v4 selector 0x44bc937b', () => {
    const data = routerDepositCalldata(vault, usdt, 248_625_000n, '=:BTC.BTC:bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4:212345', 1_900_000_000);
    expect(data.slice(0, 10)).to.equal('0x44bc937b');
    const { functionName, args } = decodeFunctionData({ abi: THORCHAIN_ROUTER_ABI, data });
    expect(functionName).to.equal('depositWithExpiry');
    expect(args).to.deep.equal([vault, usdt, 248_625_000n, '=:BTC.BTC:bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4:212345', 1_900_000_000n]);
  });

  it('approve(router, amount) as ERC-20 approve (0x095ea7b3)', () => {
    const data = approveCalldata(router, 5n);
    expect(data.slice(0, 10)).to.equal('0x095ea7b3');
    expect(decodeFunctionData({ abi: erc20Abi, data }).args).to.deep.equal([router, 5n]);
  });
});

describe('the Signer from configuration', () => {
  const base = { SIGNER_URL: '', SIGNER_TOKEN: '', SIGNER_TIMEOUT_MS: 1000, DEV_SIGNER_MNEMONIC: '', NODE_ENV: 'development' };
  const problem = (config: typeof base) => {
    try {
      signerFromConfig(config);
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      return (err as ConfigError).problems.join('\n');
    }
    return '';
  };

  it('the signing service with its token, or the development mnemonic (hyphen-joined)', () => {
    expect(signerFromConfig({ ...base, SIGNER_URL: 'https://signer.example', SIGNER_TOKEN: 't' })).to.be.instanceOf(HttpSigner);
    expect(signerFromConfig({ ...base, DEV_SIGNER_MNEMONIC: MNEMONIC.split(' ').join('-') })).to.be.instanceOf(MnemonicSigner);
  });

  it('refuses none, both, a service without token, a bad mnemonic', () => {
    expect(problem(base)).to.match(/SIGNER_URL .* or, in development, DEV_SIGNER_MNEMONIC is required/);
    expect(problem({ ...base, SIGNER_URL: 'https://signer.example', SIGNER_TOKEN: 't', DEV_SIGNER_MNEMONIC: MNEMONIC })).to.match(/both set/);
    expect(problem({ ...base, SIGNER_URL: 'https://signer.example' })).to.match(/SIGNER_TOKEN is required/);
    expect(problem({ ...base, DEV_SIGNER_MNEMONIC: 'not a mnemonic' })).to.match(/DEV_SIGNER_MNEMONIC is not a valid BIP39 mnemonic/);
  });

  it('production (NODE_ENV=production) refuses the development mnemonic and a signing service over http; takes it over https', () => {
    const prod = { ...base, NODE_ENV: 'production' };
    expect(problem({ ...prod, DEV_SIGNER_MNEMONIC: MNEMONIC.split(' ').join('-') })).to.match(/DEV_SIGNER_MNEMONIC is set in production/);
    expect(problem({ ...prod, SIGNER_URL: 'http://signer.internal', SIGNER_TOKEN: 't' })).to.match(/SIGNER_URL must be https in production/);
    expect(problem(prod)).to.match(/SIGNER_URL \(the signing service\) is required in production/);
    expect(signerFromConfig({ ...prod, SIGNER_URL: 'https://signer.internal', SIGNER_TOKEN: 't' })).to.be.instanceOf(HttpSigner);
    // development and tests keep both ways
    expect(signerFromConfig({ ...base, SIGNER_URL: 'http://127.0.0.1:1', SIGNER_TOKEN: 't' })).to.be.instanceOf(HttpSigner);
  });
});

describe("the signer's control of the gateway's deposit keys (the executor's boot check)", () => {
  const OTHER = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
  const depositsOf = (mnemonic: string) => new DepositAddresses(accountXpubsOf(mnemonic));

  it('passes when the signer derives the addresses of DEPOSIT_XPUB_*', async () => {
    await checkSignerOwnsDepositKeys(new MnemonicSigner(MNEMONIC), depositsOf(MNEMONIC));
  });

  it('refuses, naming each family, when the keys are another signer\'s', async () => {
    const err = await checkSignerOwnsDepositKeys(new MnemonicSigner(MNEMONIC), depositsOf(OTHER)).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(ConfigError);
    const text = (err as ConfigError).problems.join('\n');
    for (const family of ['evm', 'utxo', 'tvm']) expect(text).to.include(`${family} index 0`);
    expect(text).to.include(new DepositAddresses(accountXpubsOf(OTHER)).addressAt('evm', 0));
  });
});
