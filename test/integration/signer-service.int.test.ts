import { expect } from 'chai';
import { ed25519 } from '@noble/curves/ed25519';
import { keccak_256 } from '@noble/hashes/sha3';
import { base58Decode } from '@chainpipe/chains';
import { DERIVABLE_FAMILIES, HttpSigner, MnemonicSigner, accountXpubsOf, DepositAddresses } from '@chainpipe/custody';
import { TEST_KEY_MNEMONIC, freePort, spawnTs, stopProcess, waitReady, type RunningProcess } from '@chainpipe/testing';

/**
 * The HTTP client of the signing service against the service's stand-in in upstream-sim (a
 * process), whose keys come from the test kit's mnemonic: the addresses it answers are the ones
 * the gateway derives from the account public keys, its signatures are checked by the client,
 * and a refusal or a forged signature never comes back as a signature.
 */
describe('signing service client (HttpSigner) against the upstream-sim stand-in', function () {
  this.timeout(90_000);
  const TOKEN = 'signer-test-token';
  let sim: RunningProcess | undefined;
  let base = '';
  const watchOnly = new DepositAddresses(accountXpubsOf(TEST_KEY_MNEMONIC));
  const digests = [Buffer.from(keccak_256('forward')).toString('hex'), Buffer.from(keccak_256('refund')).toString('hex')];

  before(async () => {
    const [port, ops] = await Promise.all([freePort(), freePort()]);
    base = `http://127.0.0.1:${port}`;
    sim = spawnTs('apps/upstream-sim/src/main.ts', { PORT: String(port), OPS_PORT: String(ops), SIM_SIGNER_MNEMONIC: TEST_KEY_MNEMONIC, SIM_SIGNER_TOKEN: TOKEN, LOG_LEVEL: 'warn' });
    await waitReady(sim, ops, 60_000);
  });

  after(async () => {
    if (sim) expect(await stopProcess(sim)).to.equal(0);
  });

  const client = (token = TOKEN) => new HttpSigner({ baseUrl: `${base}/signer`, token, timeoutMs: 5000 });
  const refusal = (call: Promise<unknown>) => call.then(() => 'signed', (err: Error) => err.message);

  it('answers the addresses the gateway derives from the public keys, and signatures the development signer gives too', async () => {
    const local = new MnemonicSigner(TEST_KEY_MNEMONIC);
    for (const family of DERIVABLE_FAMILIES) {
      expect(await client().addressAt(family, 42), family).to.equal(watchOnly.addressAt(family, 42));
      const request = { family, index: 42, address: watchOnly.addressAt(family, 42), digests };
      // RFC 6979 signatures are deterministic: the same key gives the same signature
      expect(await client().sign(request)).to.deep.equal(await local.sign(request));
    }
  });

  it('Solana (svm): the service creates and keeps the key of each index; its address, and its ed25519 signature of the message bytes', async () => {
    const local = new MnemonicSigner(TEST_KEY_MNEMONIC);
    const [a7, a8] = [await client().addressAt('svm', 7), await client().addressAt('svm', 8)];
    // the published first Solana address of the test mnemonic (m/44'/501'/0'/0')
    expect(await client().addressAt('svm', 0)).to.equal('HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk');
    expect(a7).to.equal(await local.addressAt('svm', 7)).and.not.equal(a8);
    const message = Buffer.from('01000103a3', 'hex');
    const signature = await client().signMessage({ family: 'svm', index: 7, address: a7, message });
    expect(ed25519.verify(signature, message, base58Decode(a7)!)).to.equal(true);
    expect(await refusal(client().signMessage({ family: 'svm', index: 7, address: a8, message }))).to.match(/HTTP 400.*does not own/);
  });

  it('a wrong token, an address the key does not own: refused, no signature', async () => {
    expect(await refusal(client('another-token').sign({ family: 'evm', index: 1, address: watchOnly.addressAt('evm', 1), digests }))).to.match(/HTTP 401/);
    expect(await refusal(client().sign({ family: 'evm', index: 1, address: watchOnly.addressAt('evm', 2), digests }))).to.match(/HTTP 400.*does not own/);
  });

  it('a service that signs with another key is caught by the client', async () => {
    const forge = (on: boolean) => fetch(`${base}/sim/signer/forge`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ forge: on }) });
    expect((await forge(true)).status).to.equal(200);
    try {
      expect(await refusal(client().sign({ family: 'tvm', index: 3, address: watchOnly.addressAt('tvm', 3), digests }))).to.match(/not by the key of the deposit address/);
      const svm = await client().addressAt('svm', 3);
      expect(await refusal(client().signMessage({ family: 'svm', index: 3, address: svm, message: Buffer.from('message') }))).to.match(/not by the key of the deposit address/);
    } finally {
      await forge(false);
    }
  });
});
