import { expect } from 'chai';
import { getCompiledTransactionMessageDecoder } from '@solana/transaction-messages';
import { getTransactionDecoder } from '@solana/transactions';
import { base58Decode, base58Encode } from '@chainpipe/chains';
import { MnemonicSigner, SYSTEM_PROGRAM, signSolanaTransfer, verifiesSolanaSignature } from '../src';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
// a recent blockhash: any 32 bytes in base58
const BLOCKHASH = base58Encode(new Uint8Array(32).fill(7));

describe('Solana transfers: a System transfer from a deposit address, its message signed by the signer', () => {
  it('encodes one System Transfer (instruction 2, u64 LE lamports) from the deposit address to the recipient, signed over the message bytes; the id is the base58 signature', async () => {
    const signer = new MnemonicSigner(MNEMONIC);
    const from = { index: 5, address: await signer.addressAt('svm', 5) };
    const to = await signer.addressAt('svm', 6);
    const lamports = 1_234_567_890n;
    const { raw, hash } = await signSolanaTransfer(signer, from, to, lamports, { maxNetworkFee: 5000n, blockhash: BLOCKHASH, lastValidBlockHeight: 1000 });

    const tx = getTransactionDecoder().decode(Buffer.from(raw, 'base64'));
    const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    expect(message.version).to.equal('legacy');
    if (message.version !== 'legacy') return;
    expect(message.header).to.deep.equal({ numSignerAccounts: 1, numReadonlySignerAccounts: 0, numReadonlyNonSignerAccounts: 1 });
    expect(message.staticAccounts).to.deep.equal([from.address, to, SYSTEM_PROGRAM]);
    expect(message.lifetimeToken).to.equal(BLOCKHASH);
    expect(message.instructions).to.have.length(1);
    const [ix] = message.instructions;
    expect(ix.programAddressIndex).to.equal(2);
    expect(ix.accountIndices).to.deep.equal([0, 1]);
    // System program instruction 2 (Transfer), then the lamports: 1234567890 = 0x499602d2
    expect(Buffer.from(ix.data!).toString('hex')).to.equal('02000000' + 'd202964900000000');

    const signature = tx.signatures[from.address as never]!;
    expect(verifiesSolanaSignature(from.address, Uint8Array.from(tx.messageBytes), signature)).to.equal(true);
    expect(hash).to.equal(base58Encode(signature));
    expect(base58Decode(hash)).to.have.length(64);
  });

  it('refuses to sign for an address the key of the index does not own', async () => {
    const signer = new MnemonicSigner(MNEMONIC);
    const wrong = { index: 5, address: await signer.addressAt('svm', 9) };
    const outcome = await signSolanaTransfer(signer, wrong, await signer.addressAt('svm', 6), 1n, { maxNetworkFee: 5000n, blockhash: BLOCKHASH, lastValidBlockHeight: 1 }).then(() => 'signed', (e: Error) => e.message);
    expect(outcome).to.match(/does not own/);
  });
});
