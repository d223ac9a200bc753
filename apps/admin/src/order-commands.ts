import { parseArgs } from 'node:util';
import { canonicalAddressForChainType } from '@chainpipe/chains';
import type { Knex } from '@chainpipe/db';
import { OrderRepository, type OrderRow } from '@chainpipe/order-store';
import { UsageError, type Output } from './commands';
import { operatorOf } from './operator';

export const ORDER_USAGE = `  order:refund --order ORDER_NO [--address ADDR] [--operator NAME]
      resolve a ManualReview order by refunding its deposit in full (less the network fee) to ADDR
      (a source-chain address; default: the refund address the integrator gave); the executor's
      refund job sends it, then the order is Refunded
  order:execute --order ORDER_NO [--operator NAME]
      resolve a ManualReview order by executing it: its deposit is handed to the executor as a paid
      order (Exchanging), which forwards the received amount less the fees to the channel
      (who ran a command that moves money is recorded on the order: --operator, else
      CHAINPIPE_OPERATOR, else login@host)
`;

/**
 * `order:*` commands: an operator's resolution of a ManualReview order, through the state machine
 * (`operator_refund`, `operator_execute`) and `OrderRepository.apply`, so the change is
 * written once with its audit row, which the order tracker publishes to orders.events.v1.
 */
export async function runOrderCommand(argv: string[], db: Knex, io: Output, now: () => Date = () => new Date()): Promise<number> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({ args: rest, options: { order: { type: 'string' }, address: { type: 'string' }, operator: { type: 'string' } }, strict: true });
  if (!values.order?.trim()) throw new UsageError(`--order is required for ${command}`);
  const operator = operatorOf(values.operator);
  const orders = new OrderRepository(db);
  const order = await orders.findByNo(values.order.trim());
  if (!order) {
    io.out('no such order');
    return 1;
  }
  switch (command) {
    case 'order:refund': {
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
  const chain: { chain_type: string } | undefined = await db('price.tokens as t').join('price.chains as c', 'c.id', 't.chain_id').where('t.id', order.src_token_id).first('c.chain_type');
  const checked = canonicalAddressForChainType(chain?.chain_type ?? '', given.trim());
  return checked.ok ? { ok: true, address: checked.address } : { ok: false, error: `--address is not an address of the order's source chain (${chain?.chain_type ?? 'unknown'})` };
}
