import { bech32 } from '@scure/base';
import { expect } from 'chai';
import { canonicalAddressForChainType, networkOfReferenceChain } from '../src';

describe('address check by reference chain type', () => {
  it('cosmos: bech32 with the cosmos prefix and a 20- or 32-byte account (encoded independently)', () => {
    const account = bech32.encode('cosmos', bech32.toWords(new Uint8Array(20).fill(7)));
    expect(canonicalAddressForChainType('cosmos', account)).to.deep.equal({ ok: true, address: account });
    expect(canonicalAddressForChainType('cosmos', account.toUpperCase())).to.deep.equal({ ok: true, address: account });
    const other = bech32.encode('osmo', bech32.toWords(new Uint8Array(20).fill(7)));
    expect(canonicalAddressForChainType('cosmos', other).ok).to.equal(false);
    expect(canonicalAddressForChainType('cosmos', account.slice(0, -1) + (account.endsWith('q') ? 'p' : 'q')).ok, 'checksum').to.equal(false);
    expect(canonicalAddressForChainType('cosmos', bech32.encode('cosmos', bech32.toWords(new Uint8Array(5)))).ok).to.equal(false);
  });

  it('move: 0x and up to 64 hex digits, stored as 32 bytes lowercase', () => {
    expect(canonicalAddressForChainType('move', '0x1')).to.deep.equal({ ok: true, address: '0x' + '0'.repeat(63) + '1' });
    expect(canonicalAddressForChainType('move', '0x' + 'A'.repeat(64))).to.deep.equal({ ok: true, address: '0x' + 'a'.repeat(64) });
    expect(canonicalAddressForChainType('move', '0x' + 'a'.repeat(65)).ok).to.equal(false);
    expect(canonicalAddressForChainType('move', 'a'.repeat(64)).ok).to.equal(false);
  });

  it('the four families keep their own checks; unknown chain types are refused', () => {
    expect(canonicalAddressForChainType('evm', '0xC0D776E2223C9A2AD13433DAB7EC08CB9C5E76AE')).to.deep.equal({ ok: true, address: '0xc0d776e2223c9a2ad13433dab7ec08cb9c5e76ae' });
    expect(canonicalAddressForChainType('evm', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t').ok).to.equal(false);
    expect(canonicalAddressForChainType('tvm', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t').ok).to.equal(true);
    expect(canonicalAddressForChainType('utxo', '0xc0d776e2223c9a2ad13433dab7ec08cb9c5e76ae').ok).to.equal(false);
    expect(canonicalAddressForChainType('near', 'alice.near').ok).to.equal(false);
  });
});

describe('monitored network of a price reference chain', () => {
  it('maps family + protocol chain id to the mainnet network, undefined where none is parsed', () => {
    expect(networkOfReferenceChain('evm', '1')?.network).to.equal('ethereum-mainnet');
    expect(networkOfReferenceChain('evm', 8453)?.network).to.equal('base-mainnet');
    expect(networkOfReferenceChain('svm', 1)?.network).to.equal('solana-mainnet');
    expect(networkOfReferenceChain('tvm', 1)?.network).to.equal('tron-mainnet');
    expect(networkOfReferenceChain('utxo', 1)?.network).to.equal('bitcoin-mainnet');
    expect(networkOfReferenceChain('evm', 999_999_999), 'a chain id no catalog network has').to.equal(undefined);
    expect(networkOfReferenceChain('move', 1)).to.equal(undefined);
    expect(networkOfReferenceChain('cosmos', null)).to.equal(undefined);
  });
});

describe('EVM addresses: EIP-55', () => {
  // The four examples of EIP-55 itself, each in its checksummed form.
  const valid = ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB', '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb'];

  it('accepts the checksummed examples and one-case forms, stored lowercase', () => {
    for (const a of valid) {
      expect(canonicalAddressForChainType('evm', a), a).to.deep.equal({ ok: true, address: a.toLowerCase() });
      expect(canonicalAddressForChainType('evm', a.toLowerCase()).ok).to.equal(true);
      expect(canonicalAddressForChainType('evm', '0x' + a.slice(2).toUpperCase()).ok).to.equal(true);
    }
  });

  it('refuses a mixed-case address whose case is wrong in one letter', () => {
    for (const a of valid) {
      const i = [...a.slice(2)].findIndex((c) => /[a-f]/i.test(c)) + 2;
      const flipped = a.slice(0, i) + (a[i] === a[i].toUpperCase() ? a[i].toLowerCase() : a[i].toUpperCase()) + a.slice(i + 1);
      expect(canonicalAddressForChainType('evm', flipped), flipped).to.deep.equal({ ok: false, reason: 'has a wrong EIP-55 checksum (mixed case)' });
    }
  });
});
