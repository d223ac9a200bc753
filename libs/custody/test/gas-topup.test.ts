import { expect } from 'chai';
import { GAS_STATION_INDEX, MAX_DEPOSIT_INDEX, gasTopUp, stationLow, stationNonce } from '../src';

describe('gas top-ups of token deposit addresses (pure decisions)', () => {
  // an approve (46 000 gas) and a router deposit (120 000 gas) at a fee cap of 40 gwei
  const approve = { maxNetworkFee: 46_000n * 40_000_000_000n }; // 0.00184 ether
  const deposit = { maxNetworkFee: 120_000n * 40_000_000_000n }; // 0.0048 ether

  it('an address holding nothing gets exactly the sum of its transfers’ network fees', () => {
    // 1 840 000 000 000 000 + 4 800 000 000 000 000 = 6 640 000 000 000 000 wei
    expect(gasTopUp([approve, deposit], 0n)).to.deep.equal({ kind: 'top_up', value: 6_640_000_000_000_000n, needed: 6_640_000_000_000_000n, held: 0n });
  });

  it('what the address holds already is deducted', () => {
    // dust of 0.001 ether left by an earlier transfer: 6.64e15 − 1e15
    expect(gasTopUp([approve, deposit], 1_000_000_000_000_000n)).to.deep.include({ kind: 'top_up', value: 5_640_000_000_000_000n });
  });

  it('nothing is sent when the address holds the fees, to the wei', () => {
    expect(gasTopUp([approve, deposit], 6_640_000_000_000_000n)).to.deep.equal({ kind: 'enough', needed: 6_640_000_000_000_000n, held: 6_640_000_000_000_000n });
    expect(gasTopUp([approve, deposit], 6_639_999_999_999_999n)).to.deep.include({ kind: 'top_up', value: 1n });
    expect(gasTopUp([], 0n)).to.deep.include({ kind: 'enough', needed: 0n });
  });

  it('refuses negative amounts', () => {
    expect(() => gasTopUp([approve], -1n)).to.throw(RangeError);
    expect(() => gasTopUp([{ maxNetworkFee: -1n }], 0n)).to.throw(RangeError);
  });

  it("the station's nonce: the node's pending count, or one past the highest stored transaction the node does not count yet", () => {
    expect(stationNonce(7, null), 'nothing stored open').to.equal(7);
    expect(stationNonce(7, 5), 'stored ones the node counts already (in its pool)').to.equal(7);
    expect(stationNonce(7, 6), 'the last stored is the pending count − 1: counted').to.equal(7);
    expect(stationNonce(7, 7), 'stored at 7, not yet broadcast (another process, a crash)').to.equal(8);
    expect(stationNonce(7, 9), 'several stored, none broadcast').to.equal(10);
    expect(() => stationNonce(-1, null)).to.throw(RangeError);
  });

  it('warns under the configured level only', () => {
    expect(stationLow(10n, 11n)).to.equal(true);
    expect(stationLow(11n, 11n)).to.equal(false);
    expect(stationLow(0n, 0n), '0: no warning').to.equal(false);
  });

  it("the station's key is the last non-hardened index, which orders never take", () => {
    expect(GAS_STATION_INDEX).to.equal(2 ** 31 - 1);
    expect(GAS_STATION_INDEX).to.equal(MAX_DEPOSIT_INDEX);
  });
});
