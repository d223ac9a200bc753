import { tokenTransfer } from '../record-base';
import type { TokenTransfer } from '../types';
import type { TokenAccount, TokenBalances } from './accounts';
import type { TokenMove } from './movements';

function record(fields: {
  from: string | null;
  to: string | null;
  fromToken: string | null;
  toToken: string | null;
  mint: string | null;
  amount: bigint;
  decimals: number | null;
  programId: string | null;
  logIndex: number | null;
}): TokenTransfer {
  return tokenTransfer({
    from_address: fields.from,
    to_address: fields.to,
    token_contract_address: fields.mint,
    amount: fields.amount.toString(),
    from_token_address: fields.fromToken,
    to_token_address: fields.toToken,
    mint: fields.mint,
    program_id: fields.programId,
    decimals: fields.decimals,
    standard: 'spl',
    log_index: fields.logIndex,
  });
}

/**
 * Instruction-stated token movements → records. Token accounts are resolved to their owners
 * through pre/postTokenBalances; when a source account's owner is unknown (old nodes omit
 * `owner`), the instruction's signing authority stands in (it is the owner unless a delegate
 * signed). Mint and decimals come from the instruction when it states them (`*Checked`), else
 * from the token balances of either account, else from any balance entry of the same mint.
 */
export function tokenTransfersFromMoves(moves: readonly TokenMove[], balances: TokenBalances): TokenTransfer[] {
  return moves.map((m) => {
    const src = m.sourceAccount ? balances.byAddress.get(m.sourceAccount) : undefined;
    const dst = m.destinationAccount ? balances.byAddress.get(m.destinationAccount) : undefined;
    const mint = m.mint ?? src?.mint ?? dst?.mint ?? null;
    const decimals =
      m.decimals ?? src?.decimals ?? dst?.decimals ?? (mint !== null ? balances.decimalsByMint.get(mint) ?? null : null);
    return record({
      from: m.kind === 'mint' ? null : src?.owner ?? m.authority,
      to: m.kind === 'burn' ? null : dst?.owner ?? null,
      fromToken: m.sourceAccount,
      toToken: m.destinationAccount,
      mint,
      amount: m.amount,
      decimals,
      programId: m.programId,
      logIndex: m.ordinal,
    });
  });
}

interface Holding {
  holder: string | null;
  account: TokenAccount;
  delta: bigint;
}

/**
 * Fallback when no token instruction could be read (inner instructions missing, unknown
 * encoding): movements are derived from pre/postTokenBalances. Per (mint, owner) — the token
 * account itself when the owner is unknown — the net change is computed. For each mint, when
 * the losers' total equals the gainers' total and one side has a single holder, that holder is
 * paired with each one on the other side (one record per counterparty); otherwise every change
 * stands alone: a loss as `from → null`, a gain as `null → to`. `log_index` is null (no
 * instruction). The token address shown is the holder's first changed account.
 */
export function tokenTransfersFromBalances(balances: TokenBalances): TokenTransfer[] {
  const byMint = new Map<string, Map<string, Holding>>();
  for (const acc of balances.accounts) {
    if (acc.mint === null) continue;
    const delta = (acc.post ?? 0n) - (acc.pre ?? 0n);
    if (delta === 0n) continue;
    const holder = acc.owner ?? acc.address;
    const key = holder ?? `#${acc.accountIndex}`;
    const holdings = byMint.get(acc.mint) ?? new Map<string, Holding>();
    const h = holdings.get(key);
    if (h) h.delta += delta;
    else holdings.set(key, { holder, account: acc, delta });
    byMint.set(acc.mint, holdings);
  }
  const out: TokenTransfer[] = [];
  for (const [mint, holdings] of byMint) {
    const losers = [...holdings.values()].filter((h) => h.delta < 0n);
    const gainers = [...holdings.values()].filter((h) => h.delta > 0n);
    const lost = losers.reduce((s, h) => s - h.delta, 0n);
    const gained = gainers.reduce((s, h) => s + h.delta, 0n);
    const make = (from: Holding | null, to: Holding | null, amount: bigint) =>
      record({
        from: from?.holder ?? null,
        to: to?.holder ?? null,
        fromToken: from?.account.address ?? null,
        toToken: to?.account.address ?? null,
        mint,
        amount,
        decimals: (from ?? to)?.account.decimals ?? balances.decimalsByMint.get(mint) ?? null,
        programId: (from ?? to)?.account.programId ?? null,
        logIndex: null,
      });
    if (lost === gained && losers.length === 1) {
      for (const g of gainers) out.push(make(losers[0], g, g.delta));
    } else if (lost === gained && gainers.length === 1) {
      for (const l of losers) out.push(make(l, gainers[0], -l.delta));
    } else {
      for (const l of losers) out.push(make(l, null, -l.delta));
      for (const g of gainers) out.push(make(null, g, g.delta));
    }
  }
  return out;
}
