import type { HttpAggIntegratorOrder, HttpAggIntegratorOrderCreated } from '@chainpipe/contracts';
import type { OrderDepositRow, OrderRow } from '@chainpipe/order-store';

const iso = (d: Date | null): string | null => (d ? new Date(d).toISOString() : null);

export function createdView(o: OrderRow): HttpAggIntegratorOrderCreated {
  return {
    order_id: Number(o.id),
    order_no: o.order_no,
    deposit_address: o.deposit_address,
    deposit_memo: o.deposit_memo,
    deposit_router: o.deposit_router,
    expire_at: iso(o.expire_at)!,
    fee_platform: o.fee_platform,
    fee_partner: '0',
    fee_integrator: o.fee_integrator,
    fee_platform_original: o.fee_platform_original,
    platform_fee_rate: o.platform_fee_rate,
    partner_fee_rate: o.partner_fee_rate,
    integrator_fee_rate: o.integrator_fee_rate,
  };
}

/** The order as its integrator reads it; `extras`: the deposits it could not take (docs/decisions.md#d164). */
export function orderView(o: OrderRow, extras: readonly OrderDepositRow[] = []): HttpAggIntegratorOrder {
  return {
    order_id: Number(o.id),
    order_no: o.order_no,
    state: o.state,
    integrator_id: o.integrator_id === null ? null : String(o.integrator_id),
    src_token_id: o.src_token_id,
    dst_token_id: o.dst_token_id,
    amount_in: o.amount_in,
    dst_address: o.dst_address,
    refund_address: o.refund_address,
    channel_id: o.channel_id,
    deposit_address: o.deposit_address,
    deposit_memo: o.deposit_memo,
    deposit_router: o.deposit_router,
    slippage: o.slippage,
    estimated_out: o.estimated_out,
    min_acceptable_out_amount: o.min_acceptable_out,
    fee_platform: o.fee_platform,
    fee_partner: o.fee_partner,
    fee_integrator: o.fee_integrator,
    fee_platform_original: o.fee_platform_original,
    platform_fee_rate: o.platform_fee_rate,
    partner_fee_rate: o.partner_fee_rate,
    integrator_fee_rate: o.integrator_fee_rate,
    deposit_tx_hash: o.deposit_tx_hash,
    deposit_amount: o.deposit_amount,
    forward_tx_hash: o.forward_tx_hash,
    payout_tx_hash: o.payout_tx_hash,
    refund_tx_hash: o.refund_tx_hash,
    client_order_id: o.client_order_id,
    created_at: iso(o.created_at)!,
    updated_at: iso(o.updated_at)!,
    expire_at: iso(o.expire_at)!,
    auto_cancel_at: iso(o.auto_cancel_at)!,
    deposited_at: iso(o.deposited_at),
    settled_at: iso(o.settled_at),
    extra_deposits: extras.map((d) => ({
      tx_hash: d.tx_hash,
      amount: (d.other_asset ? d.other_amount : d.amount) ?? '0',
      network: d.network,
      deposited_at: iso(d.tx_time),
      ...(d.other_asset ? { asset: d.other_asset } : {}),
    })),
  };
}
