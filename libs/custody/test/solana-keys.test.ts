import { expect } from 'chai';
import { ed25519 } from '@noble/curves/ed25519';
import { base58Decode } from '@chainpipe/chains';
import { MnemonicSigner, slip10Derive, solanaDepositPath, verifiesSolanaSignature } from '../src';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

/**
 * SLIP-0010's published ed25519 test vectors (slip-0010.md, "Test vector 1/2 for ed25519"):
 * the chain code and private key of each path.
 */
const VECTORS: { seed: string; chains: [string, string, string][] }[] = [
  {
    seed: '000102030405060708090a0b0c0d0e0f',
    chains: [
      ['m', '90046a93de5380a72b5e45010748567d5ea02bbf6522f979e05c0d8d8ca9fffb', '2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7'],
      ["m/0'", '8b59aa11380b624e81507a27fedda59fea6d0b779a778918a2fd3590e16e9c69', '68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3'],
      ["m/0'/1'", 'a320425f77d1b5c2505a6b1b27382b37368ee640e3557c315416801243552f14', 'b1d0bad404bf35da785a64ca1ac54b2617211d2777696fbffaf208f746ae84f2'],
      ["m/0'/1'/2'", '2e69929e00b5ab250f49c3fb1c12f252de4fed2c1db88387094a0f8c4c9ccd6c', '92a5b23c0b8a99e37d07df3fb9966917f5d06e02ddbd909c7e184371463e9fc9'],
      ["m/0'/1'/2'/2'", '8f6d87f93d750e0efccda017d662a1b31a266e4a6f5993b15f5c1f07f74dd5cc', '30d1dc7e5fc04c31219ab25a27ae00b50f6fd66622f6e9c913253d6511d1e662'],
      ["m/0'/1'/2'/2'/1000000000'", '68789923a0cac2cd5a29172a475fe9e0fb14cd6adb5ad98a3fa70333e7afa230', '8f94d394a8e8fd6b1bc2f3f49f5c47e385281d5c17e65324b0f62483e37e8793'],
    ],
  },
  {
    seed: 'fffcf9f6f3f0edeae7e4e1dedbd8d5d2cfccc9c6c3c0bdbab7b4b1aeaba8a5a29f9c999693908d8a8784817e7b7875726f6c696663605d5a5754514e4b484542',
    chains: [
      ['m', 'ef70a74db9c3a5af931b5fe73ed8e1a53464133654fd55e7a66f8570b8e33c3b', '171cb88b1b3c1db25add599712e36245d75bc65a1a5c9e18d76f9f2b1eab4012'],
      ["m/0'", '0b78a3226f915c082bf118f83618a618ab6dec793752624cbeb622acb562862d', '1559eb2bbec5790b0c65d8693e4d0875b1747f4970ae8b650486ed7470845635'],
      ["m/0'/2147483647'", '138f0b2551bcafeca6ff2aa88ba8ed0ed8de070841f0c4ef0165df8181eaad7f', 'ea4f5bfe8694d8bb74b7b59404632fd5968b774ed545e810de9c32a4fb4192f4'],
      ["m/0'/2147483647'/1'", '73bd9fff1cfbde33a1b846c27085f711c0fe2d66fd32e139d3ebc28e5a4a6b90', '3757c7577170179c7868353ada796c839135b3d30554bbb74a4b1e4a5a58505c'],
      ["m/0'/2147483647'/1'/2147483646'", '0902fe8a29f9140480a00ef244bd183e8a13288e4412d8389d140aac1794825a', '5837736c89570de861ebc173b1086da4f505d4adb387c6a1b1342d5e4ac9ec72'],
      ["m/0'/2147483647'/1'/2147483646'/2'", '5d70af781f3a37b829f0d060924d5e960bdc02e85423494afc0b1a41bbe196d4', '551d333177df541ad876a60ea71f00447931c0a9da16f227c11ea080d7391b8d'],
    ],
  },
];

describe('Solana deposit keys: SLIP-0010 ed25519 derivation and message signatures', () => {
  it('derives every chain code and private key of the published SLIP-0010 ed25519 test vectors', () => {
    for (const v of VECTORS) {
      for (const [path, chainCode, key] of v.chains) {
        const node = slip10Derive(Buffer.from(v.seed, 'hex'), path);
        expect(hex(node.chainCode), `${v.seed.slice(0, 8)} ${path} chain code`).to.equal(chainCode);
        expect(hex(node.key), `${v.seed.slice(0, 8)} ${path} key`).to.equal(key);
      }
    }
  });

  it('refuses a non-hardened step (ed25519 has no public derivation)', () => {
    expect(() => slip10Derive(Buffer.from(VECTORS[0].seed, 'hex'), "m/0'/1")).to.throw(/not hardened/);
  });

  it("gives the address wallets show for the mnemonic at m/44'/501'/0'/0' (Phantom's first account)", async () => {
    expect(solanaDepositPath(0)).to.equal("m/44'/501'/0'/0'");
    // the published first Solana address of the BIP39 test mnemonic
    expect(await new MnemonicSigner(MNEMONIC).addressAt('svm', 0)).to.equal('HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk');
  });

  it('signs the message bytes with the key of the index: verifies under the address, not under a neighbour, not for another message', async () => {
    const signer = new MnemonicSigner(MNEMONIC);
    const [a3, a4] = [await signer.addressAt('svm', 3), await signer.addressAt('svm', 4)];
    expect(a3).to.not.equal(a4);
    const message = new TextEncoder().encode('a Solana transaction message');
    const sig = await signer.signMessage({ family: 'svm', index: 3, address: a3, message });
    expect(sig).to.have.length(64);
    expect(ed25519.verify(sig, message, base58Decode(a3)!)).to.equal(true);
    expect(verifiesSolanaSignature(a3, message, sig)).to.equal(true);
    expect(verifiesSolanaSignature(a4, message, sig)).to.equal(false);
    expect(verifiesSolanaSignature(a3, new TextEncoder().encode('another message'), sig)).to.equal(false);
    // ed25519 signatures are deterministic (RFC 8032)
    expect(hex(await signer.signMessage({ family: 'svm', index: 3, address: a3, message }))).to.equal(hex(sig));
  });

  it('refuses an address its key does not own, and digests for Solana / messages for secp256k1 families', async () => {
    const signer = new MnemonicSigner(MNEMONIC);
    const refusal = (call: Promise<unknown>) => call.then(() => undefined, (err: Error) => err.message);
    const message = new Uint8Array([1, 2, 3]);
    expect(await refusal(signer.signMessage({ family: 'svm', index: 1, address: await signer.addressAt('svm', 2), message }))).to.match(/does not own/);
    expect(await refusal(signer.sign({ family: 'svm' as never, index: 1, address: await signer.addressAt('svm', 1), digests: ['00'.repeat(32)] }))).to.match(/signs messages/);
    expect(await refusal(signer.signMessage({ family: 'evm' as never, index: 1, address: await signer.addressAt('evm', 1), message }))).to.match(/signs digests/);
  });
});
