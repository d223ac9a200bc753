import { NETWORKS, type NetworkInfo } from '@chainpipe/chains';
import type { TransferChain } from '@chainpipe/custody';
import type { Knex } from '@chainpipe/db';
import { OrderDepositRepository, type OrderRow } from '@chainpipe/order-store';
import { verifyDeposit, type ChainTxLookup, type DepositToken } from '@chainpipe/orders';
import { ReferenceRepository } from '@chainpipe/price-store';

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
  private readonly deposits: OrderDepositRepository;
  private readonly reference: ReferenceRepository;

  constructor(private readonly deps: { db: Knex; chainTx(network: NetworkInfo, txHash: string): Promise<ChainTxLookup> }) {
    this.deposits = new OrderDepositRepository(deps.db);
    this.reference = new ReferenceRepository(deps.db);
  }

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

  /**
   * A channel's refund of the platform's forward, by the hash the channel named (`execution.tx_hash`,
   * recorded by the tracker): mined, successful, with `confirmations`, and paying the order's
   * address in the source token, as the node shows it; `amount` is what it brought
   * (docs/decisions.md#d165). Until then the principal is not at the address, and nothing is refunded.
   */
  async providerReturn(order: OrderRow, chain: Pick<TransferChain, 'receipt'>, confirmations: number): Promise<{ ok: true; hash: string; amount: bigint } | { ok: false; reason: 'no_hash' | 'not_confirmed' | 'not_to_the_address'; detail: string }> {
    const named = typeof order.execution?.tx_hash === 'string' ? order.execution.tx_hash : null;
    if (!named) return { ok: false, reason: 'no_hash', detail: 'the channel named no refund transaction' };
    const network = await this.network(order);
    if (!network) return { ok: false, reason: 'not_to_the_address', detail: `no network of ${order.deposit_chain_type}` };
    const hash = txHashOn(network.family, named);
    const receipt = await chain.receipt(hash);
    if (!receipt.mined || !receipt.success || receipt.confirmations < confirmations) return { ok: false, reason: 'not_confirmed', detail: `the channel's refund ${hash} is not confirmed yet` };
    const verdict = verifyDeposit(await this.deps.chainTx(network, hash), order.deposit_address, await this.token(order.src_token_id, network.family), false);
    if (verdict.kind !== 'verified') return { ok: false, reason: 'not_to_the_address', detail: `the channel's refund ${hash} pays the deposit address nothing of the source token` };
    return { ok: true, hash, amount: verdict.amount };
  }

  /** The network the deposit was seen on (recorded with it), else the chain type's mainnet, where the senders send. */
  private async network(order: OrderRow): Promise<NetworkInfo | undefined> {
    const seen = await this.deposits.networkOf(order.id, order.deposit_tx_hash);
    return NETWORKS.find((n) => (seen !== undefined ? n.network === seen : n.chainType === order.deposit_chain_type && !n.testnet));
  }

  private async token(tokenId: number, family: DepositToken['family']): Promise<DepositToken> {
    const cached = this.tokens.get(tokenId);
    if (cached) return cached;
    const row = await this.reference.tokenAsset(tokenId);
    const token: DepositToken = { isNative: row?.is_native === true, contractAddress: row?.contract_address ?? null, family };
    this.tokens.set(tokenId, token);
    return token;
  }
}

/** A transaction hash as the chain's node names it (THORChain names EVM hashes in upper case without `0x`). */
function txHashOn(family: string, hash: string): string {
  if (family === 'evm') return `0x${hash.replace(/^0x/i, '').toLowerCase()}`;
  if (family === 'tvm' || family === 'utxo') return hash.replace(/^0x/i, '').toLowerCase();
  return hash;
}
