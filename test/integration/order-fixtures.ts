import { randomBytes } from 'node:crypto';
import type { NewOrder } from '@chainpipe/order-store';

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
    deposit_memo: null,
    deposit_router: null,
    deposit_chain_type: 'ethereum',
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
