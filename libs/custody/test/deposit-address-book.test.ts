import { expect } from 'chai';
import { DepositAddressBook, DepositAddresses, MnemonicSigner, NoDepositDerivation, accountXpubsOf } from '../src';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

describe('deposit address book: watch-only derivation, Solana from the signing service', () => {
  const watchOnly = new DepositAddresses(accountXpubsOf(MNEMONIC));

  it('without a signing service: the derivable families only; Solana is not supported and has no address', async () => {
    const book = new DepositAddressBook(watchOnly);
    expect(['evm', 'utxo', 'tvm', 'svm'].map((f) => book.supports(f))).to.deep.equal([true, true, true, false]);
    expect(await book.addressAt('evm', 3)).to.equal(watchOnly.addressAt('evm', 3));
    const refused = await book.addressAt('svm', 3).then(() => undefined, (err: Error) => err);
    expect(refused).to.be.instanceOf(NoDepositDerivation);
  });

  it("with one: Solana's address of the index is the service's answer; the others are still derived, the service never asked", async () => {
    const asked: string[] = [];
    const keys = new MnemonicSigner(MNEMONIC);
    const service = { addressAt: async (family: 'svm' | 'evm' | 'utxo' | 'tvm', index: number) => (asked.push(`${family}/${index}`), keys.addressAt(family, index)) };
    const book = new DepositAddressBook(watchOnly, service);
    expect(book.supports('svm')).to.equal(true);
    expect(await book.addressAt('svm', 0)).to.equal('HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk');
    expect(await book.addressAt('tvm', 0)).to.equal(watchOnly.addressAt('tvm', 0));
    expect(asked).to.deep.equal(['svm/0']);
  });
});
