import { randomBytes } from 'node:crypto';
import { TOPICS, type TxPushMessage } from '@chainpipe/contracts';
import type { Knex } from '@chainpipe/db';
import type { NewOrder } from '@chainpipe/order-store';
import { topicMessage } from '@chainpipe/testing';

/**
 * An integrator order as the gateway would store it: 0.1 ETH (token 101) to BTC (1001) on
 * channel 1, expiring in 30 minutes, without integrator, a fresh order number and deposit
 * address. Tests override what they are about.
 */
export function orderFixture(over: Partial<NewOrder> = {}): NewOrder {
  const now = Date.now();
  return {
    order_no: `T${randomBytes(8).toString('hex')}`,
    integrator_id: null,
    key_id: null,
    client_order_id: null,
    request_hash: 'h'.repeat(64),
    src_token_id: 101,
    dst_token_id: 1001,
    amount_in: '100000000000000000',
    dst_address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
    channel_id: 1,
    channel_kind: 'thorchain',
    provider_order_id: randomBytes(6).toString('hex'),
    deposit_address: '0x' + randomBytes(20).toString('hex'),
    deposit_index: null,
    deposit_memo: null,
    deposit_router: null,
    deposit_chain_type: 'ethereum',
    forward_address: null,
    forward_memo: null,
    forward_router: null,
    slippage: '0.01',
    estimated_out: '249375',
    min_acceptable_out: '247500',
    fee_platform: '300000000000000',
    fee_partner: '0',
    fee_integrator: '0',
    fee_platform_original: '300000000000000',
    platform_fee_rate: '0.0030',
    partner_fee_rate: '0.0000',
    integrator_fee_rate: '0.0000',
    src_price_usd: '2500',
    src_price_as_of: new Date(now),
    state: 'Depositing',
    expire_at: new Date(now + 30 * 60_000),
    auto_cancel_at: new Date(now + 24 * 3600_000),
    extra: {},
    ...over,
  };
}

/**
 * The tx.push.v1 record tx-matcher publishes for an Ethereum transaction paying `amountWei` of
 * native ETH to `to`, a monitored address of application `appId`.
 */
export function nativeDepositPush(appId: string, to: string, amountWei: string, over: { hash?: string; status?: 'success' | 'pending'; time?: number } = {}): TxPushMessage {
  const hash = over.hash ?? '0x' + randomBytes(32).toString('hex');
  return topicMessage(TOPICS.txPush, {
    message_id: randomBytes(16).toString('hex'),
    app_id: appId,
    tx_id: '1',
    network: 'ethereum-mainnet',
    listen_address: [to],
    is_reorg_resend: false,
    orphaned: false,
    ws: true,
    webhook: false,
    matched_at: Date.now(),
    tx: {
      chain_type: 'ethereum', chain_id: 1, height: 20_000_000, block_hash: '0x' + '0'.repeat(64), tx_time: over.time ?? Math.floor(Date.now() / 1000), tx_hash: hash,
      tx_index: 0, tx_version: null, sender: '0x' + '1'.repeat(40), receiver: to, fee_payer: null, transfer_type: 'native', amount: amountWei, symbol: 'ETH',
      decimals: 18, tx_status: over.status ?? 'success', tx_fee: '21000', gas_limit: null, gas_used: null, gas_price: null, max_fee_per_gas: null,
      max_priority_fee_per_gas: null, nonce: null, method_id: null, method_call: null, l1_origin_hash: null,
      token_transfers: [], from_details: [], to_details: [], internal_transactions: [],
    } as unknown as TxPushMessage['tx'],
  });
}

/**
 * A suite's database outlives its simulator: transfers an earlier run stored and never saw mined
 * were for that run's chain, which is gone. Marked failed, so the gas station (one key across
 * runs) does not count their nonces on the new chain and the executor does not broadcast them.
 */
export async function voidEarlierChainTransfers(db: Knex): Promise<void> {
  await db('agg.outgoing_transfers').whereIn('status', ['signed', 'broadcast']).update({ status: 'failed', error: 'stored for an earlier test chain', finished_at: db.fn.now() });
}
