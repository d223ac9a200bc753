import { expect } from 'chai';
import { depositKeyEnvOf } from '@chainpipe/custody';
import { TEST_KEY_MNEMONIC, freePort, spawnTs, stopProcess, suiteDatabase, waitReady } from '@chainpipe/testing';

/**
 * order-executor's custody guards at boot (docs/decisions.md#d162), each a real process: the
 * gateway's deposit keys must be the signer's, and production signs through the signing service
 * over https only. A refused start exits non-zero, naming why.
 */
describe('order-executor refuses to start with keys it cannot sign for, or a development signer in production', function () {
  this.timeout(90_000);
  // a database of its own: an executor that starts acts on every paid order it finds
  let databaseUrl = '';
  before(async () => {
    databaseUrl = await suiteDatabase('order_executor_boot');
  });
  const base = () => ({ DATABASE_URL: databaseUrl, CHAIN_RPC_DEFAULT_BASE: 'http://127.0.0.1:9/rpc', CHAIN_RPC_URLS: '', LOG_LEVEL: 'warn' });
  /** The process's exit code and what it printed; it must end by itself. */
  const refused = async (env: Record<string, string>) => {
    const p = spawnTs('apps/order-executor/src/main.ts', { ...base(), OPS_PORT: String(await freePort()), ...env });
    const code = await Promise.race([p.exited, new Promise<string>((r) => setTimeout(() => r('still running'), 60_000))]);
    if (code === 'still running') await stopProcess(p);
    return { code, output: p.output() };
  };

  it("DEPOSIT_XPUB_* of another signer: refused, naming each family's addresses", async () => {
    const other = depositKeyEnvOf('legal winner thank year wave sausage worth useful legal winner thank yellow');
    const { code, output } = await refused(other);
    expect(code).to.not.equal(0);
    expect(output).to.include('the signer does not control the deposit keys the gateway hands out');
    for (const family of ['evm', 'utxo', 'tvm']) expect(output).to.include(`${family} index 0`);
  });

  it('NODE_ENV=production with DEV_SIGNER_MNEMONIC, or with a signing service over http: refused', async () => {
    const withMnemonic = await refused({ NODE_ENV: 'production' });
    expect(withMnemonic.code).to.not.equal(0);
    expect(withMnemonic.output).to.include('DEV_SIGNER_MNEMONIC is set in production');
    const overHttp = await refused({ NODE_ENV: 'production', DEV_SIGNER_MNEMONIC: '', SIGNER_URL: 'http://127.0.0.1:9', SIGNER_TOKEN: 't' });
    expect(overHttp.code).to.not.equal(0);
    expect(overHttp.output).to.include('SIGNER_URL must be https in production');
  });

  it("the test kit's own keys: the executor starts", async () => {
    const ops = await freePort();
    const p = spawnTs('apps/order-executor/src/main.ts', { ...base(), ...depositKeyEnvOf(TEST_KEY_MNEMONIC), OPS_PORT: String(ops) });
    await waitReady(p, ops, 60_000);
    expect(await stopProcess(p), 'clean exit').to.equal(0);
  });
});
