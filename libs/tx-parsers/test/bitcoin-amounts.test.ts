import { seededRandom } from '@chainpipe/testing';
import { expect } from 'chai';
import { btcToSats, satsFromString } from '../src/bitcoin/amounts';

/** Satoshi → the BTC literal Core would print, built with string operations only. */
function btcLiteral(sats: bigint): string {
  const digits = sats.toString().padStart(9, '0');
  return `${digits.slice(0, -8)}.${digits.slice(-8)}`;
}

describe('bitcoin amounts', () => {
  describe('btcToSats (Core BTC numbers)', () => {
    it('converts values where multiplying by 1e8 goes wrong', () => {
      // 0.29 * 1e8 = 28999999.999999996 in floating point; the decimal route must give 29000000.
      expect(Math.floor(0.29 * 1e8)).to.equal(28999999);
      expect(btcToSats(0.29)).to.equal(29_000_000n);
      expect(btcToSats(0.57)).to.equal(57_000_000n);
      expect(btcToSats(1.15)).to.equal(115_000_000n);
      expect(btcToSats(4.35)).to.equal(435_000_000n);
    });

    it('is exact at the edges of the range', () => {
      expect(btcToSats(0)).to.equal(0n);
      expect(btcToSats(0.00000001)).to.equal(1n);
      expect(btcToSats(20999999.99999999)).to.equal(2_099_999_999_999_999n);
      expect(btcToSats(21000000)).to.equal(2_100_000_000_000_000n);
      // Values copied from fixtures: 766393 coinbase vout 0, prevout 700bf4b1 vin 0.
      expect(btcToSats(6.25043733)).to.equal(625_043_733n);
      expect(btcToSats(0.00005045)).to.equal(5045n);
    });

    it('round-trips 100k random satoshi amounts printed as JSON numbers', () => {
      // Seeded, so the property test sees the same values on every run.
      const rand = seededRandom(0xb17c0);
      for (let i = 0; i < 100_000; i++) {
        // Mix tiny, mid and near-maximum magnitudes.
        const scale = [1e3, 1e8, 1e12, 2.1e15][i % 4];
        const sats = BigInt(Math.floor(rand() * scale));
        const parsed = JSON.parse(btcLiteral(sats)) as number;
        expect(btcToSats(parsed), btcLiteral(sats)).to.equal(sats);
      }
    });

    it('accepts decimal strings digit by digit', () => {
      expect(btcToSats('50.00000000')).to.equal(5_000_000_000n);
      expect(btcToSats('0.1')).to.equal(10_000_000n);
      expect(btcToSats('7')).to.equal(700_000_000n);
    });

    it('rejects what is not an 8-decimal amount within MAX_MONEY', () => {
      for (const bad of [
        -1, -0.00000001, NaN, Infinity, -Infinity, 1e-9, 0.1 + 0.2, 21000000.00000001, 1e21, 1e308,
        '1e3', '', ' 1', '-1', '0.123456789', '21000000.00000001', '0x10', null, undefined, {}, [], true,
      ]) {
        expect(btcToSats(bad), String(bad)).to.equal(null);
      }
    });
  });

  describe('satsFromString (Blockbook satoshi strings)', () => {
    it('parses digit strings and safe integers exactly', () => {
      expect(satsFromString('5000000000')).to.equal(5_000_000_000n);
      expect(satsFromString('0')).to.equal(0n);
      expect(satsFromString('123456789012345678901234567890')).to.equal(123456789012345678901234567890n);
      expect(satsFromString(546)).to.equal(546n);
    });

    it('rejects everything else', () => {
      for (const bad of ['', '-1', '1.5', '0x1a', ' 1', '1'.repeat(31), 1.5, -1, 2 ** 60, NaN, null, {}]) {
        expect(satsFromString(bad), String(bad)).to.equal(null);
      }
    });
  });
});
