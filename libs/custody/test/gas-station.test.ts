import { expect } from 'chai';
import { parseChainOrigins } from '@chainpipe/chains';
import type { OutgoingTransferRow } from '@chainpipe/order-store';
import { GAS_STATION_INDEX, GasStation, MnemonicSigner, stationChainTypesWithOrigin, stationKeyOf, stationWarnBelow, type OutgoingTransferIntent, type StationChain } from '../src';

// the BIP39 test-vector mnemonic ("abandon … about")
const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

describe('the gas station on EVM chains and Tron (no I/O)', () => {
  const key = { index: GAS_STATION_INDEX, addresses: { evm: '0x' + 'aa'.repeat(20), tvm: 'TStationAddressXXXXXXXXXXXXXXXXXXX' } };
  const stub = (withNonces: boolean): StationChain =>
    ({
      balanceOf: async () => 0n,
      // a TRX transfer to an address that does not exist yet: 300 bytes at 1000 sun and both activation fees
      feePlan: async () => ({ bandwidthFee: 300_000n, activationFee: 1_100_000n, feeLimit: 0n, maxNetworkFee: 1_400_000n }),
      ...(withNonces ? { nextNonce: async () => 4 } : {}),
      sign: async () => {
        throw new Error('not signed here');
      },
      broadcast: async () => 'accepted',
      receipt: async () => ({ mined: false }),
    }) as StationChain;

  /** A station whose stored transfers are recorded: what `prepare` was asked, and whether the sender lock was taken. */
  const station = (chains: Record<string, StationChain>) => {
    const prepared: OutgoingTransferIntent[] = [];
    const locks: string[] = [];
    const row = (intent: OutgoingTransferIntent) => ({ order_id: intent.orderId, kind: intent.kind, chain_type: intent.chainType, status: 'broadcast', tx_hash: 'h', detail: intent.detail }) as unknown as OutgoingTransferRow;
    const gas = new GasStation({
      transfers: {
        prepare: async (intent) => (prepared.push(intent), row(intent)),
        broadcast: async (r) => r,
        follow: async (r) => r,
      },
      store: {
        find: async () => undefined,
        withSenderLock: (async (chainType: string, address: string, run: (locked: unknown) => Promise<unknown>) => {
          locks.push(`${chainType}:${address}`);
          return run({ highestOpenNonce: async () => null, find: async () => undefined, store: async () => ({}) });
        }) as never,
      },
      chain: (ct) => chains[ct],
      station: key,
      recordTopUp: async () => undefined,
    });
    return { gas, prepared, locks };
  };

  it('sends from its Tron key on Tron and its EVM key on EVM chains; nowhere else, nor where no sender is configured', () => {
    const { gas } = station({ tron: stub(false), ethereum: stub(true), bitcoin: stub(false) });
    expect([gas.addressOn('tron'), gas.addressOn('ethereum'), gas.addressOn('bsc'), gas.addressOn('bitcoin'), gas.addressOn('solana')]).to.deep.equal([key.addresses.tvm, key.addresses.evm, key.addresses.evm, undefined, undefined]);
    expect(['tron', 'ethereum', 'bsc', 'bitcoin'].map((ct) => gas.serves(ct))).to.deep.equal([true, true, false, false]);
  });

  it('a Tron top-up: from the Tron key, exactly the TRC-20 transfer’s planned fee, no nonce and no sender lock (Tron has no account nonces)', async () => {
    const { gas, prepared, locks } = station({ tron: stub(false) });
    // a USDT transfer's plan: 400 bytes at 1000 sun, fee_limit twice 14 650 energy at 210 sun
    const plan = { bandwidthFee: 400_000n, activationFee: 0n, feeLimit: 6_153_000n, maxNetworkFee: 6_553_000n };
    const state = await gas.ensure({ orderId: 'o1', purpose: 'forward', chainType: 'tron', address: 'TDeposit', plans: [plan] });
    expect(state.kind).to.equal('waiting');
    expect(locks, 'no lock').to.deep.equal([]);
    expect(prepared).to.have.length(1);
    expect(prepared[0]).to.deep.include({ kind: 'gas_topup_forward', chainType: 'tron', from: { index: GAS_STATION_INDEX, address: key.addresses.tvm }, amount: 6_553_000n, asset: null });
    expect(prepared[0].call).to.deep.equal({ to: 'TDeposit', value: 6_553_000n, fees: { bandwidthFee: 300_000n, activationFee: 1_100_000n, feeLimit: 0n, maxNetworkFee: 1_400_000n } });
    expect(prepared[0].detail?.plans).to.deep.equal([{ bandwidthFee: '400000', activationFee: '0', feeLimit: '6153000', maxNetworkFee: '6553000' }]);
  });

  it('an EVM top-up takes its nonce under the lock of the station’s EVM address', async () => {
    const { gas, prepared, locks } = station({ ethereum: stub(true) });
    await gas.ensure({ orderId: 'o2', purpose: 'refund', chainType: 'ethereum', address: '0xdeposit', plans: [{ maxNetworkFee: 5n }] });
    expect(locks).to.deep.equal([`ethereum:${key.addresses.evm}`]);
    expect(prepared[0].call.nonce).to.equal(4);
  });

  it('its key is the reserved index of the EVM and the Tron deposit accounts, as the signer derives them', async () => {
    const signer = new MnemonicSigner(MNEMONIC);
    const k = await stationKeyOf(signer);
    expect(k.index).to.equal(2 ** 31 - 1);
    expect(k.addresses.evm).to.equal(await signer.addressAt('evm', 2 ** 31 - 1));
    expect(k.addresses.tvm).to.equal(await signer.addressAt('tvm', 2 ** 31 - 1));
    expect(k.addresses.tvm).to.match(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
  });

  it('its balance is read on the EVM chains and Tron that have an origin', () => {
    const types = stationChainTypesWithOrigin(parseChainOrigins('ethereum-mainnet=http://e,tron-mainnet=http://t,bitcoin-mainnet=http://b,solana-mainnet=http://s', null));
    expect(types).to.have.members(['ethereum', 'tron']);
  });

  it('warns under GAS_STATION_LOW_BALANCE_GWEI on EVM chains (wei) and GAS_STATION_LOW_BALANCE_TRX on Tron (sun)', () => {
    const warnBelow = stationWarnBelow({ GAS_STATION_LOW_BALANCE_GWEI: 50_000_000, GAS_STATION_LOW_BALANCE_TRX: 500 });
    expect(warnBelow('ethereum')).to.equal(50_000_000n * 10n ** 9n);
    expect(warnBelow('tron')).to.equal(500n * 10n ** 6n);
  });
});
