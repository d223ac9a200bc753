import { expect } from 'chai';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { ACCOUNT_PATHS, DepositAddresses, NoDepositDerivation, parseAccountXpub, type DerivableFamily } from '../src';

// The mnemonic of the BIP39/BIP84 test vectors; its first addresses are published in BIP84 and
// shown by every wallet that restores it.
const VECTOR_MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const root = HDKey.fromMasterSeed(mnemonicToSeedSync(VECTOR_MNEMONIC));
const xpubOf = (family: DerivableFamily) => root.derive(ACCOUNT_PATHS[family]).publicExtendedKey;
const vectorKeys = () => new DepositAddresses({ evm: xpubOf('evm'), utxo: xpubOf('utxo'), tvm: xpubOf('tvm') });

describe('deposit keys: watch-only deposit addresses from extended public keys', () => {
  it('derives the published first addresses of the vector mnemonic on each family', () => {
    const keys = vectorKeys();
    // BIP84: m/84'/0'/0'/0/0 and m/84'/0'/0'/0/1
    expect(keys.addressAt('utxo', 0)).to.equal('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
    expect(keys.addressAt('utxo', 1)).to.equal('bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g');
    // m/44'/60'/0'/0/0, stored lower case
    expect(keys.addressAt('evm', 0)).to.equal('0x9858effd232b4033e47d90003d41ec34ecaeda94');
    // m/44'/195'/0'/0/0
    expect(keys.addressAt('tvm', 0)).to.equal('TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH');
  });

  it('gives every index its own address', () => {
    const keys = vectorKeys();
    for (const family of ['evm', 'utxo', 'tvm'] as const) {
      const addresses = new Set([0, 1, 2, 3, 2_147_483_647].map((i) => keys.addressAt(family, i)));
      expect(addresses.size, family).to.equal(5);
    }
  });

  it('refuses an extended private key, a malformed key and indexes BIP32 cannot derive publicly', () => {
    expect(() => parseAccountXpub(root.derive(ACCOUNT_PATHS.evm).privateExtendedKey)).to.throw(/not an extended public key/);
    const xpub = xpubOf('evm');
    const brokenChecksum = xpub.slice(0, -1) + (xpub.endsWith('a') ? 'b' : 'a');
    expect(() => parseAccountXpub(brokenChecksum)).to.throw(/not a valid extended public key/);
    expect(() => vectorKeys().addressAt('evm', 2_147_483_648)).to.throw(/outside/);
    expect(() => vectorKeys().addressAt('evm', -1)).to.throw(/outside/);
  });

  it('has no deposit address for Solana (ed25519 derives hardened only)', () => {
    expect(() => vectorKeys().addressAt('svm', 0)).to.throw(NoDepositDerivation);
  });
});
