import { parseArgs } from 'node:util';
import { canonicalAddressForChainType } from '@chainpipe/chains';
import type { Knex } from '@chainpipe/db';
import { OrderDepositRepository, OrderRepository, OutgoingTransferRepository, type OrderRow } from '@chainpipe/order-store';
import { ReferenceRepository } from '@chainpipe/price-store';
import { UsageError, type Output } from './commands';
import { operatorOf } from './operator';

export const ORDER_USAGE = `  order:show --order ORDER_NO
      an order as stored (any order: also those created without a key, or of a disabled
      integrator, which no integrator key can read), its deposits and its audit trail
  order:refund --order ORDER_NO [--address ADDR] [--operator NAME]
      refund an order's deposit in full (less the network fee) to ADDR (a source-chain address;
      default: the refund address the integrator gave): a ManualReview order, a failed swap whose
      principal is at the deposit address, or a paid order not yet forwarded (taken back from the
      executor); the executor's refund job sends it, then the order is Refunded
  order:execute --order ORDER_NO [--operator NAME]
      resolve a ManualReview order by executing it: its deposit is handed to the executor as a paid
      order (Exchanging), which forwards the received amount less the fees to the channel
  order:close --order ORDER_NO --reason TEXT [--operator NAME]
      close a paid order whose principal is lost (a channel that never pays out nor refunds, a
      failed refund): FailedNoRefund, final
      (who ran a command that moves money or closes an order is recorded on the order: --operator,
      else CHAINPIPE_OPERATOR, else login@host)
`;

/**
 * `order:*` commands: an operator's way out for any order that is not final (docs/decisions.md#d163),
 * each through the state machine (`operator_refund`, `operator_execute`, `operator_close`) and
 * `OrderRepository.apply`, so the change is written once with its audit row (naming the
 * operator), which the order tracker publishes to orders.events.v1.
 */
export async function runOrderCommand(argv: string[], db: Knex, io: Output, now: () => Date = () => new Date()): Promise<number> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({ args: rest, options: { order: { type: 'string' }, address: { type: 'string' }, operator: { type: 'string' }, reason: { type: 'string' } }, strict: true });
  if (!values.order?.trim()) throw new UsageError(`--order is required for ${command}`);
  if (values.reason !== undefined && command !== 'order:close') throw new UsageError(`--reason is not an option of ${command}`);
  const operator = operatorOf(values.operator);
  const orders = new OrderRepository(db);
  const order = await orders.findByNo(values.order.trim());
  if (!order) {
    io.out('no such order');
    return 1;
  }
  switch (command) {
    case 'order:show': {
      io.out(JSON.stringify(order, null, 2));
      for (const d of await new OrderDepositRepository(db).ofOrder(order.id)) io.out(`deposit\t${d.tx_hash}\t${d.network}\t${d.status}\t${d.amount ?? '-'}\t${new Date(d.seen_at).toISOString()}`);
      for (const a of await orders.audit(order.id)) io.out(`audit\t${new Date(a.created_at).toISOString()}\t${a.event}\t${a.from_state ?? '-'} → ${a.to_state}\t${JSON.stringify(a.detail)}`);
      return 0;
    }
    case 'order:refund': {
      // a forward stored (signed, maybe broadcast) is money on its way to the channel, whatever the order says yet
      if (order.state === 'Exchanging' && (await new OutgoingTransferRepository(db).find(order.id, 'forward'))) {
        io.out(`${order.order_no}: nothing done: its forward is sent; the channel decides (order:close if the principal is lost)`);
        return 1;
      }
      const address = await refundAddressOf(db, order, values.address);
      if (!address.ok) {
        io.out(address.error);
        return 1;
      }
      const applied = await orders.apply(
        order,
        { type: 'operator_refund' },
        () => ({ resolution: 'refund', refund_address: address.address, refund_requested_at: order.refund_requested_at ?? now() }),
        { event: 'operator_refund', detail: { refund_address: address.address, previous_refund_address: order.refund_address, deposit_amount: order.deposit_amount, operator } },
      );
      return report(io, applied.moved !== undefined, order, applied.reason, `refund of ${order.deposit_amount} to ${address.address} recorded; the executor sends it`);
    }
    case 'order:execute': {
      if (values.address !== undefined) throw new UsageError('--address is not an option of order:execute');
      const applied = await orders.apply(
        order,
        { type: 'operator_execute' },
        () => ({ resolution: 'execute' }),
        { event: 'operator_execute', detail: { deposit_amount: order.deposit_amount, operator } },
      );
      return report(io, applied.moved !== undefined, order, applied.reason, `handed to the executor as a paid order of ${order.deposit_amount} (Exchanging)`);
    }
    case 'order:close': {
      if (values.address !== undefined) throw new UsageError('--address is not an option of order:close');
      const reason = values.reason?.trim();
      if (!reason) throw new UsageError('--reason is required for order:close');
      const applied = await orders.apply(order, { type: 'operator_close' }, () => ({}), { event: 'operator_close', detail: { reason, deposit_amount: order.deposit_amount, operator } });
      return report(io, applied.moved !== undefined, order, applied.reason, 'closed: FailedNoRefund');
    }
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

function report(io: Output, moved: boolean, order: OrderRow, reason: string | undefined, done: string): number {
  if (moved) {
    io.out(`${order.order_no}: ${done}`);
    return 0;
  }
  io.out(`${order.order_no}: nothing done in ${order.state}${order.resolution ? ` (resolved: ${order.resolution})` : ''}: ${reason ?? 'unchanged'}`);
  return 1;
}

/** The address given (checked against the source chain's format), or the one the order has. */
async function refundAddressOf(db: Knex, order: OrderRow, given: string | undefined): Promise<{ ok: true; address: string } | { ok: false; error: string }> {
  if (given === undefined) {
    return order.refund_address ? { ok: true, address: order.refund_address } : { ok: false, error: `${order.order_no} has no refund address: give one with --address` };
  }
  const chainType = await new ReferenceRepository(db).chainTypeOfToken(order.src_token_id);
  const checked = canonicalAddressForChainType(chainType ?? '', given.trim());
  return checked.ok ? { ok: true, address: checked.address } : { ok: false, error: `--address is not an address of the order's source chain (${chainType ?? 'unknown'})` };
}
