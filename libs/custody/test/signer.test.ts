import { expect } from 'chai';
import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak_256 } from '@noble/hashes/sha3';
import { DERIVABLE_FAMILIES, DepositAddresses, MnemonicSigner, accountXpubsOf, depositPublicKey, parseAccountXpub } from '../src';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const OTHER = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('development signer: keys of one mnemonic, the deposit side holding only their public halves', () => {
  const xpubs = accountXpubsOf(MNEMONIC);
  const watchOnly = new DepositAddresses(xpubs);
  const signer = new MnemonicSigner(MNEMONIC);

  it('owns every address the watch-only side derives, on each family', async () => {
    for (const family of DERIVABLE_FAMILIES) {
      for (const index of [0, 7, 1_000_000]) expect(await signer.addressAt(family, index), `${family} ${index}`).to.equal(watchOnly.addressAt(family, index));
    }
    // the published first address of this mnemonic, whichever side derives it
    expect(await signer.addressAt('evm', 0)).to.equal('0x9858effd232b4033e47d90003d41ec34ecaeda94');
  });

  it('signs each digest with the key of the index: low-S, verifying under the public key the xpub gives, recovering it', async () => {
    const digests = [hex(keccak_256('first transaction')), hex(keccak_256('second transaction'))];
    for (const family of DERIVABLE_FAMILIES) {
      const publicKey = depositPublicKey(parseAccountXpub(xpubs[family]), 5);
      const sigs = await signer.sign({ family, index: 5, address: watchOnly.addressAt(family, 5), digests });
      expect(sigs).to.have.length(2);
      sigs.forEach((sig, i) => {
        const parsed = new secp256k1.Signature(BigInt(`0x${sig.r}`), BigInt(`0x${sig.s}`)).addRecoveryBit(sig.recovery);
        expect(parsed.hasHighS(), 'low S').to.equal(false);
        expect(secp256k1.verify(parsed.toCompactRawBytes(), Buffer.from(digests[i], 'hex'), publicKey), `${family} digest ${i}`).to.equal(true);
        expect(hex(parsed.recoverPublicKey(digests[i]).toRawBytes(true))).to.equal(hex(publicKey));
      });
    }
  });

  it('refuses an address its key does not own, a malformed digest, an index out of range and a family without keys', async () => {
    const other = new DepositAddresses(accountXpubsOf(OTHER));
    const digest = hex(keccak_256('tx'));
    const refusal = async (call: () => Promise<unknown>) => call().then(() => undefined, (err: Error) => err.message);
    expect(await refusal(() => signer.sign({ family: 'evm', index: 1, address: other.addressAt('evm', 1), digests: [digest] }))).to.match(/does not own/);
    expect(await refusal(() => signer.sign({ family: 'evm', index: 1, address: watchOnly.addressAt('evm', 2), digests: [digest] }))).to.match(/does not own/);
    expect(await refusal(() => signer.sign({ family: 'evm', index: 1, address: watchOnly.addressAt('evm', 1), digests: ['ab'] }))).to.match(/32 bytes/);
    expect(await refusal(() => signer.addressAt('evm', 2 ** 31))).to.match(/outside/);
    expect(await refusal(() => signer.addressAt('cosmos' as never, 0))).to.match(/no deposit key/);
  });

  it('reads the mnemonic in the env-file form too (words joined by hyphens)', async () => {
    expect(await new MnemonicSigner(MNEMONIC.split(' ').join('-')).addressAt('utxo', 0)).to.equal('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
    expect(() => new MnemonicSigner('abandon abandon abandon')).to.throw(/not a valid BIP39 mnemonic/);
  });
});
