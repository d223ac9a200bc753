import { expect } from 'chai';
import { bitcoinDustThreshold, SOLANA_LAMPORTS_PER_SIGNATURE, solanaRentExemptMinimum } from '../src/chain-nodes/chain-rules';

const script = (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex'));
const hash20 = '00'.repeat(20);
const hash32 = '00'.repeat(32);

describe("the chains' own rules the simulated ledgers enforce", () => {
  it("Bitcoin Core's dust thresholds at the default 3 sat/vB dust relay fee: 546 P2PKH, 540 P2SH, 294 P2WPKH, 330 P2WSH and P2TR, none for OP_RETURN", () => {
    // the values Core's policy gives (and wallets document) for each output type
    expect(bitcoinDustThreshold(script(`76a914${hash20}88ac`))).to.equal(546n);
    expect(bitcoinDustThreshold(script(`a914${hash20}87`))).to.equal(540n);
    expect(bitcoinDustThreshold(script(`0014${hash20}`))).to.equal(294n);
    expect(bitcoinDustThreshold(script(`0020${hash32}`))).to.equal(330n);
    expect(bitcoinDustThreshold(script(`5120${hash32}`))).to.equal(330n);
    expect(bitcoinDustThreshold(script('6a0474657374'))).to.equal(0n);
  });

  it("Solana's rent-exempt minimums as mainnet answers getMinimumBalanceForRentExemption (0 bytes, a mint of 82, a token account of 165) and its 5000-lamport signature fee", () => {
    expect(solanaRentExemptMinimum(0)).to.equal(890_880n);
    expect(solanaRentExemptMinimum(82)).to.equal(1_461_600n);
    expect(solanaRentExemptMinimum(165)).to.equal(2_039_280n);
    expect(SOLANA_LAMPORTS_PER_SIGNATURE).to.equal(5000n);
  });
});
