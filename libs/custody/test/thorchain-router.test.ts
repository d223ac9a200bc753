import { expect } from 'chai';
import { decodeFunctionData, erc20Abi } from 'viem';
import { ConfigError } from '@chainpipe/runtime';
import { HttpSigner, MnemonicSigner, THORCHAIN_ROUTER_ABI, approveCalldata, routerDepositCalldata, signerFromConfig } from '../src';

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
  const base = { SIGNER_URL: '', SIGNER_TOKEN: '', SIGNER_TIMEOUT_MS: 1000, DEV_SIGNER_MNEMONIC: '' };
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
});
