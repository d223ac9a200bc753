import { expect } from 'chai';
import { hexToString, keccak256, parseGwei, parseTransaction, recoverTransactionAddress, type Hex } from 'viem';
import { MnemonicSigner, memoCalldata, signEvmTransaction } from '../src';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const OTHER = 'legal winner thank year wave sausage worth useful legal winner thank yellow';

describe('EVM transactions signed for a deposit address', () => {
  const signer = new MnemonicSigner(MNEMONIC);
  const fields = { chainId: 1, nonce: 3, to: '0x2222222222222222222222222222222222222222', value: 123_456_789n, gas: 30_000n, maxFeePerGas: parseGwei('4'), maxPriorityFeePerGas: parseGwei('1') };

  it('encodes exactly the fields asked, signed by the key of the index: the chain recovers the deposit address', async () => {
    const from = { index: 9, address: await signer.addressAt('evm', 9) };
    const memo = '=:BTC.BTC:bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4:247500';
    const { raw, hash } = await signEvmTransaction(signer, from, { ...fields, data: memoCalldata(memo) });
    expect(hash).to.equal(keccak256(raw));
    const parsed = parseTransaction(raw);
    expect(parsed).to.include({ type: 'eip1559', chainId: 1, nonce: 3, to: fields.to, value: 123_456_789n, gas: 30_000n, maxFeePerGas: parseGwei('4'), maxPriorityFeePerGas: parseGwei('1') });
    expect(hexToString(parsed.data as Hex)).to.equal(memo);
    expect((await recoverTransactionAddress({ serializedTransaction: raw as never })).toLowerCase()).to.equal(from.address);
  });

  it('is refused when the signer key of the index does not own the address', async () => {
    const foreign = { index: 9, address: await new MnemonicSigner(OTHER).addressAt('evm', 9) };
    let failure: Error | undefined;
    await signEvmTransaction(signer, foreign, fields).catch((err: Error) => (failure = err));
    expect(failure?.message).to.match(/does not own/);
  });
});
