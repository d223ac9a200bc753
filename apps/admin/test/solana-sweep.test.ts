import { expect } from 'chai';
import { solanaSweepFit } from '@chainpipe/custody';
import { decideSweep } from '@chainpipe/orders';

describe('Solana fee sweeps under the rent rule (the deposit account ends empty or with at least 890 880 lamports)', () => {
  const FEE = 5000n; // one signature
  /** `decideSweep` of a Completed order, then the rent rule; the treasury account exists unless `treasuryHeld` says otherwise. */
  const sweep = (fees: bigint, held: bigint, treasuryHeld = 1n) => {
    const decision = decideSweep({ state: 'Completed', feePlatform: fees, feeIntegrator: 0n, held, networkFee: FEE });
    return decision.kind === 'skip' ? decision : solanaSweepFit({ held, value: decision.value, fee: FEE, treasuryHeld });
  };

  it('after a forward the address holds the fees less the forward fee: everything but the sweep fee goes, closing the account', () => {
    expect(sweep(11_000_000n, 11_000_000n - FEE)).to.deep.equal({ kind: 'sweep', value: 11_000_000n - 2n * FEE });
  });

  it('holding more than fees + fee, by less than the minimum: the minimum stays and the sweep is that much smaller, never more than the fees', () => {
    // 100 000 lamports over: sending the fees would leave 100 000, under 890 880
    expect(sweep(11_000_000n, 11_000_000n + FEE + 100_000n)).to.deep.equal({ kind: 'sweep', value: 11_000_000n + 100_000n - 890_880n });
    // exactly the minimum over: the fees go whole
    expect(sweep(11_000_000n, 11_000_000n + FEE + 890_880n)).to.deep.equal({ kind: 'sweep', value: 11_000_000n });
    // fees smaller than what the minimum takes back: nothing to send
    expect(sweep(100_000n, 100_000n + FEE + 100n)).to.deep.equal({ kind: 'skip', reason: 'deposit_rent' });
  });

  it('an empty treasury account must receive at least the minimum; an existing one takes any amount', () => {
    expect(sweep(11_000_000n, 500_000n, 0n)).to.deep.equal({ kind: 'skip', reason: 'treasury_rent' });
    expect(sweep(11_000_000n, 500_000n)).to.deep.equal({ kind: 'sweep', value: 495_000n });
    expect(sweep(11_000_000n, 890_880n + FEE, 0n)).to.deep.equal({ kind: 'sweep', value: 890_880n });
  });
});
