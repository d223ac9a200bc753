import { NETWORKS, type NetworkInfo } from '@chainpipe/chains';
import type { Knex } from '@chainpipe/db';
import type { OrderRow } from '@chainpipe/order-store';
import { verifyDeposit, type ChainTxLookup, type DepositToken } from '@chainpipe/orders';

/** What the check needs of a chain: what an address holds (`EvmSender`, `BitcoinSender`, `TronSender`, `SolanaSender`). */
export interface HoldingsChain {
  balanceOf(address: string): Promise<bigint>;
  /** What `holder` holds of a token contract; absent on chains without tokens. */
  tokenBalanceOf?(token: string, holder: string): Promise<bigint>;
}

export type DepositCheck =
  | { ok: true }
  /** Not (yet) shown by the node as paying the order (`not_on_chain`, `not_paid`: never), or the address does not hold it. */
  | { ok: false; reason: 'unknown_to_node' | 'not_mined' | 'not_paid' | 'short' | 'not_held'; detail: string };

/**
 * The deposit of a paid order read from the chain's node itself before any money leaves its
 * address (docs/decisions.md#d161): the deposit transaction, as the node shows it, pays the
 * order's address at least `deposit_amount` of the source token, and (`held`) the address holds
 * at least that much now. The order's own record (from tx.push.v1) is never taken on its word.
 */
export class DepositOnChain {
  private readonly tokens = new Map<number, DepositToken>();

  constructor(private readonly deps: { db: Knex; chainTx(network: NetworkInfo, txHash: string): Promise<ChainTxLookup> }) {}

  async check(order: OrderRow, chain: HoldingsChain, opts: { held: boolean }): Promise<DepositCheck> {
    if (!order.deposit_tx_hash || order.deposit_amount === null) return { ok: false, reason: 'unknown_to_node', detail: 'no deposit on the order' };
    const network = await this.network(order);
    if (!network) return { ok: false, reason: 'unknown_to_node', detail: `no network of ${order.deposit_chain_type}` };
    const token = await this.token(order.src_token_id, network.family);
    const verdict = verifyDeposit(await this.deps.chainTx(network, order.deposit_tx_hash), order.deposit_address, token, false);
    if (verdict.kind === 'wait') return { ok: false, reason: verdict.reason, detail: `deposit ${order.deposit_tx_hash} ${verdict.reason}` };
    if (verdict.kind !== 'verified') return { ok: false, reason: 'not_paid', detail: `deposit ${order.deposit_tx_hash} pays the address nothing of the source token on ${network.network}` };
    const recorded = BigInt(order.deposit_amount);
    if (verdict.amount < recorded) return { ok: false, reason: 'short', detail: `deposit ${order.deposit_tx_hash} pays ${verdict.amount} on the chain, the order records ${recorded}` };
    if (!opts.held) return { ok: true };
    const holds = token.isNative ? await chain.balanceOf(order.deposit_address) : chain.tokenBalanceOf ? await chain.tokenBalanceOf(token.contractAddress!, order.deposit_address) : 0n;
    if (holds < recorded) return { ok: false, reason: 'not_held', detail: `the address holds ${holds}, the deposit was ${recorded}` };
    return { ok: true };
  }

  /** The network the deposit was seen on (recorded with it), else the chain type's mainnet, where the senders send. */
  private async network(order: OrderRow): Promise<NetworkInfo | undefined> {
    const seen: { network: string } | undefined = await this.deps.db('agg.order_deposits').where({ order_id: order.id, tx_hash: order.deposit_tx_hash }).first('network');
    return NETWORKS.find((n) => (seen ? n.network === seen.network : n.chainType === order.deposit_chain_type && !n.testnet));
  }

  private async token(tokenId: number, family: DepositToken['family']): Promise<DepositToken> {
    const cached = this.tokens.get(tokenId);
    if (cached) return cached;
    const row: { is_native: boolean; contract_address: string | null } | undefined = await this.deps.db('price.tokens').where({ id: tokenId }).first('is_native', 'contract_address');
    const token: DepositToken = { isNative: row?.is_native === true, contractAddress: row?.contract_address ?? null, family };
    this.tokens.set(tokenId, token);
    return token;
  }
}
