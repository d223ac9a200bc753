import { expect } from 'chai';
import { getAddress } from 'viem';
import { ConfigError, loadConfig } from '@chainpipe/runtime';
import { sweepConfig } from '../src/config';

describe('treasury:sweep configuration', () => {
  const base = { DEV_SIGNER_MNEMONIC: 'x', CHAIN_RPC_DEFAULT_BASE: 'http://127.0.0.1:1/rpc' };
  const refusal = (env: Record<string, string>): string => {
    try {
      loadConfig(sweepConfig, env);
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error('accepted');
  };

  it('takes the treasury, checksummed or lower-case, in its canonical (lower-case) form', () => {
    const lower = '0xabcdef0123456789abcdef0123456789abcdef01';
    expect(loadConfig(sweepConfig, { ...base, TREASURY_ADDRESS_EVM: getAddress(lower) }).TREASURY_ADDRESS_EVM).to.equal(lower);
    expect(loadConfig(sweepConfig, { ...base, TREASURY_ADDRESS_EVM: lower }).TREASURY_ADDRESS_EVM).to.equal(lower);
  });

  it('refuses a missing treasury and one that is not an EVM address, naming it', () => {
    expect(refusal(base)).to.include('TREASURY_ADDRESS_EVM is required');
    expect(refusal({ ...base, TREASURY_ADDRESS_EVM: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4' })).to.include('TREASURY_ADDRESS_EVM is not an EVM address');
    expect(refusal({ ...base, TREASURY_ADDRESS_EVM: '0x1234' })).to.include('TREASURY_ADDRESS_EVM is not an EVM address');
    // a mixed-case address whose EIP-55 checksum is wrong is a typo, not the treasury
    expect(refusal({ ...base, TREASURY_ADDRESS_EVM: '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01' })).to.include('TREASURY_ADDRESS_EVM is not an EVM address');
  });

  it('takes an optional Bitcoin treasury (mainnet, bech32 in lower case) and refuses one that is not a mainnet Bitcoin address', () => {
    const evm = { ...base, TREASURY_ADDRESS_EVM: '0xabcdef0123456789abcdef0123456789abcdef01' };
    expect(loadConfig(sweepConfig, evm).TREASURY_ADDRESS_UTXO).to.equal('');
    // BIP173's mainnet P2WPKH test vector, upper case as a QR code carries it
    expect(loadConfig(sweepConfig, { ...evm, TREASURY_ADDRESS_UTXO: 'BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4' }).TREASURY_ADDRESS_UTXO).to.equal('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4');
    expect(refusal({ ...evm, TREASURY_ADDRESS_UTXO: 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx' })).to.include('TREASURY_ADDRESS_UTXO is not a Bitcoin mainnet address');
    expect(refusal({ ...evm, TREASURY_ADDRESS_UTXO: '0xabcdef0123456789abcdef0123456789abcdef01' })).to.include('TREASURY_ADDRESS_UTXO is not a Bitcoin mainnet address');
  });

  it('takes a Tron treasury in its Base58 form, or none (Tron fees are then not swept); refuses one that is not a Tron address', () => {
    const evm = { ...base, TREASURY_ADDRESS_EVM: '0xabcdef0123456789abcdef0123456789abcdef01' };
    expect(loadConfig(sweepConfig, evm).TREASURY_ADDRESS_TVM).to.equal('');
    // USDT-TRC20's contract: a well-formed Base58Check Tron address (its hex form 41a614f8… converts to it)
    expect(loadConfig(sweepConfig, { ...evm, TREASURY_ADDRESS_TVM: '41a614f803b6fd780986a42c78ec9c7f77e6ded13c' }).TREASURY_ADDRESS_TVM).to.equal('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
    expect(refusal({ ...evm, TREASURY_ADDRESS_TVM: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u' })).to.include('TREASURY_ADDRESS_TVM is not a Tron address');
    expect(refusal({ ...evm, TREASURY_ADDRESS_TVM: '0xabcdef0123456789abcdef0123456789abcdef01' })).to.include('TREASURY_ADDRESS_TVM is not a Tron address');
  });

  it('takes a Solana treasury (base58 of a 32-byte key), or none (Solana fees are then not swept); refuses one of another chain', () => {
    const evm = { ...base, TREASURY_ADDRESS_EVM: '0xabcdef0123456789abcdef0123456789abcdef01' };
    expect(loadConfig(sweepConfig, evm).TREASURY_ADDRESS_SVM).to.equal('');
    // USDC's mint on Solana: a well-formed address
    expect(loadConfig(sweepConfig, { ...evm, TREASURY_ADDRESS_SVM: ' EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v ' }).TREASURY_ADDRESS_SVM).to.equal('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');
    // a Tron address is base58 too, of 25 bytes; an EVM one is not base58
    expect(refusal({ ...evm, TREASURY_ADDRESS_SVM: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' })).to.include('TREASURY_ADDRESS_SVM is not a Solana address');
    expect(refusal({ ...evm, TREASURY_ADDRESS_SVM: '0xabcdef0123456789abcdef0123456789abcdef01' })).to.include('TREASURY_ADDRESS_SVM is not a Solana address');
  });
});
