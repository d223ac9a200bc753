import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { Counter, type Registry } from 'prom-client';
import { AmountBelowProviderMinimum, ProviderError } from '@chainpipe/aggregator';
import { solanaKeepsRent, type DepositAddressBook } from '@chainpipe/custody';
import { canonicalAddressForChainType, networkOfReferenceChain, type NetworkInfo } from '@chainpipe/chains';
import { TOPICS, type HttpAggIntegratorOrderCreate } from '@chainpipe/contracts';
import { ApiKeyRepository, type Knex } from '@chainpipe/db';
import type { TopicProducer } from '@chainpipe/kafka';
import { OrderDepositRepository, OrderRepository, type NewOrder, type OrderDepositRow, type OrderRow } from '@chainpipe/order-store';
import {
  checkRequote, commissionOf, decideClientOrderRepeat, decideRefund, orderIdentityText, parseDecimal, percentToRateSnapshot, rateSnapshot, splitFees,
  worthAtLeast, type OrderIdentity,
} from '@chainpipe/orders';
import { type TokenRow } from '@chainpipe/price';
import { QuoteStore, ReferenceRepository } from '@chainpipe/price-store';
import { systemClock, type Clock, type ConfigOf, type Logger } from '@chainpipe/runtime';
import { MonitoredAddressRepository, changeMessages } from '@chainpipe/tx-store';
import type { orderConfig } from './config';
import { MSG, checkRules, newOrderNo } from './create-request';
import type { IntegratorIdentity } from './integrator-auth';
import { ChannelTimeoutError, type OrderChannels } from './ports';

export interface OrderServiceDeps {
  db: Knex;
  redis: Redis;
  producer: Pick<TopicProducer, 'publish'>;
  channels: OrderChannels;
  /** The platform's deposit addresses (watch-only public keys; Solana's from the signing service): no private key. */
  depositAddresses: Pick<DepositAddressBook, 'supports' | 'addressAt'>;
  config: ConfigOf<typeof orderConfig>;
  logger: Logger;
  registry: Registry;
  /** Time of order creation, expiry, refund decisions and the price age check. */
  clock?: Pick<Clock, 'now'>;
}

/** A use-case refused with the spec's status and message. */
export class OrderError extends Error {
  constructor(
    readonly status: number,
    msg: string,
  ) {
    super(msg);
  }
}

const bad = (msg: string) => new OrderError(400, msg);

function metricsOf(registry: Registry) {
  return {
    created: new Counter({ name: 'chainpipe_agg_orders_created_total', help: 'Integrator orders created, by whether a commission is bound', labelNames: ['integrator'], registers: [registry] }),
    rejected: new Counter({ name: 'chainpipe_agg_order_rejections_total', help: 'Order creations refused, by message', labelNames: ['msg'], registers: [registry] }),
    refunds: new Counter({ name: 'chainpipe_agg_refund_requests_total', help: 'Refund requests by outcome', labelNames: ['outcome'], registers: [registry] }),
    depositAddressFailures: new Counter({
      name: 'chainpipe_agg_deposit_address_failures_total',
      help: 'Order creations refused because no deposit address could be had (the signing service of Solana addresses failed or timed out), by chain family',
      labelNames: ['family'],
      registers: [registry],
    }),
    depositPublishFailures: new Counter({
      name: 'chainpipe_agg_deposit_address_publish_failures_total',
      help: 'Deposit addresses stored as monitored addresses but not published to addresses.changes.v1 (the matcher picks them up at its next resync)',
      registers: [registry],
    }),
  };
}

const identityOfRow = (o: OrderRow): OrderIdentity => ({
  srcTokenId: o.src_token_id,
  dstTokenId: o.dst_token_id,
  amountIn: BigInt(o.amount_in),
  dstAddress: o.dst_address,
  channelId: o.channel_id,
});

export interface OrderService {
  /** Creates the order, or answers the existing one of a repeated `client_order_id`. */
  create(body: HttpAggIntegratorOrderCreate, caller: IntegratorIdentity): Promise<{ order: OrderRow; repeat: boolean }>;
  /** The order `orderNo` of the authenticated integrator. */
  ownOrder(orderNo: string, caller: IntegratorIdentity): Promise<OrderRow>;
  /** Records the refund address of an order (the spec's refund table). */
  requestRefund(order: OrderRow, refundAddress: string): Promise<void>;
  /** The verified deposits the order could not take (docs/decisions.md#d164). */
  extraDeposits(order: OrderRow): Promise<OrderDepositRow[]>;
}

/**
 * The integrator order use-cases: the orchestration (tokens, prices, channel calls, storage,
 * deposit address monitoring) around the pure decisions of `@chainpipe/orders`. Refusals are
 * `OrderError`s with the spec's status and message; the routes only translate HTTP.
 */
export function orderService(deps: OrderServiceDeps): OrderService {
  const clock = deps.clock ?? systemClock;
  const orders = new OrderRepository(deps.db);
  const reference = new ReferenceRepository(deps.db);
  const quotes = new QuoteStore(deps.redis);
  const monitored = new MonitoredAddressRepository(deps.db);
  const metrics = metricsOf(deps.registry);
  const log = deps.logger.child({ component: 'integrator-orders' });
  const { config } = deps;
  const parsedMinUsd = parseDecimal(config.ORDER_MIN_AMOUNT_USD);
  if (!parsedMinUsd || parsedMinUsd.negative) throw new Error(`ORDER_MIN_AMOUNT_USD ${config.ORDER_MIN_AMOUNT_USD} is not a decimal amount`);
  const minUsd = parsedMinUsd;

  async function token(id: number): Promise<{ token: TokenRow; network: NetworkInfo | undefined }> {
    const [row] = await reference.tokensByIds([id]);
    if (!row) throw bad(await reference.unlistedTokenReason(id));
    return { token: row, network: networkOfReferenceChain(row.chain_type, row.protocol_chain_id) };
  }

  async function priceOf(t: TokenRow): Promise<{ text: string; asOf: Date }> {
    const [quote] = t.external_id ? await quotes.readQuotes([t.external_id]) : [undefined];
    const asOfMs = quote ? Number(quote.as_of) : NaN;
    if (!quote || !(quote.usd.price > 0) || clock.now() - asOfMs > config.ORDER_PRICE_MAX_AGE_MS) {
      throw new OrderError(503, 'price of the source token unavailable, retry later');
    }
    return { text: String(quote.usd.price), asOf: new Date(asOfMs) };
  }

  /** A channel call with the per-call deadline; failures become the quote errors of the spec (502). */
  async function upstream<T>(what: string, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const signal = AbortSignal.timeout(config.ORDER_UPSTREAM_TIMEOUT_MS);
    try {
      return await call(signal);
    } catch (err) {
      // the provider's minimum (its range, THORChain's recommended minimum) is the spec's minimum row
      if (err instanceof AmountBelowProviderMinimum) throw bad(MSG.amountBelowMinimum);
      // The per-call deadline here, or the provider's own one inside the adapter.
      const timedOut = err instanceof ChannelTimeoutError || signal.aborted || (err instanceof ProviderError && err.kind === 'timeout');
      log.warn({ msg: 'channel_call_failed', what, timedOut, err: (err as Error)?.message });
      throw new OrderError(502, timedOut ? 'quote service timed out' : 'quote service unavailable');
    }
  }

  /** The address of a deposit index; the signing service's answer (Solana) within the per-call deadline. */
  async function depositAddressAt(family: string, index: number): Promise<string> {
    try {
      return await deps.depositAddresses.addressAt(family, index, AbortSignal.timeout(config.ORDER_UPSTREAM_TIMEOUT_MS));
    } catch (err) {
      metrics.depositAddressFailures.inc({ family });
      log.warn({ msg: 'deposit_address_failed', family, index, err: (err as Error)?.message });
      throw new OrderError(503, 'deposit address unavailable, retry later');
    }
  }

  let depositApp: Promise<void> | undefined;
  async function registerDeposit(order: OrderRow, network: NetworkInfo): Promise<void> {
    const appId = config.ORDER_DEPOSIT_APP_ID;
    // the internal application owning the deposit addresses (idempotent; once per process)
    depositApp ??= new ApiKeyRepository(deps.db).createApp(appId, 'Aggregator deposit addresses').catch((err) => {
      depositApp = undefined;
      throw err;
    });
    await depositApp;
    const changes = [{ chainType: network.chainType, adds: [order.deposit_address], removes: [] }];
    await monitored.apply(appId, changes, async () => {
      try {
        await deps.producer.publish(
          TOPICS.addressesChanges,
          changeMessages(appId, changes, clock.now()).map((value) => ({ value })),
        );
      } catch (err) {
        metrics.depositPublishFailures.inc();
        log.warn({ msg: 'deposit_address_publish_failed', orderNo: order.order_no, err: (err as Error)?.message });
      }
    });
  }

  /** The existing order of a repeated client_order_id, or the spec's duplicate error. */
  function repeatOf(existing: OrderRow, wanted: OrderIdentity): { order: OrderRow; repeat: true } {
    if (decideClientOrderRepeat(identityOfRow(existing), wanted) === 'duplicate_client_order_id') throw bad(MSG.duplicateClientOrderId);
    return { order: existing, repeat: true };
  }

  async function create(b: HttpAggIntegratorOrderCreate, caller: IntegratorIdentity): Promise<{ order: OrderRow; repeat: boolean }> {
    const integrator = caller.kind === 'ok' ? caller : null;
    const rules = checkRules(b);
    if (!rules.ok) throw bad(rules.msg);
    const src = await token(b.src_token_id);
    const dst = await token(b.dst_token_id);
    if (!src.network) throw bad(MSG.chainNotFound); // deposits are seen only on monitored chains
    const srcNetwork = src.network;
    // Solana's keys derive hardened only: no deposit address without the signing service
    if (!deps.depositAddresses.supports(srcNetwork.family)) throw bad(MSG.chainNotFound);
    // the platform sends native SOL only from a Solana deposit address: an SPL token paid there
    // could be neither forwarded nor refunded, so it is no source (docs/decisions.md, "SPL token sources are refused")
    if (srcNetwork.family === 'svm' && !src.token.is_native) throw bad(MSG.tokenNotFound);
    const dstAddress = canonicalAddressForChainType(dst.token.chain_type, b.dst_address);
    if (!dstAddress.ok) throw bad(MSG.dstAddressInvalid);
    const amountIn = BigInt(b.amount_in);
    const wanted: OrderIdentity = { srcTokenId: src.token.id, dstTokenId: dst.token.id, amountIn, dstAddress: dstAddress.address, channelId: b.chosen_channel_id };

    // A repeat answers the order it already has, before any price, minimum or channel call: a
    // retry with a refreshed quote must not fail on figures that moved since.
    const earlier = b.client_order_id ? await orders.findByClientOrderId(integrator?.integratorId ?? null, b.client_order_id) : undefined;
    const found = earlier ? repeatOf(earlier, wanted) : undefined;
    if (found) {
      // registered again on a repeat too: repairs a registration that failed after the insert
      await registerDeposit(found.order, srcNetwork);
      return found;
    }

    const price = await priceOf(src.token);
    if (!worthAtLeast(amountIn, src.token.decimals, parseDecimal(price.text)!, minUsd)) throw bad(MSG.amountBelowMinimum);
    const channel = await deps.channels.find(b.chosen_channel_id);
    if (!channel || !channel.enabled) throw bad(MSG.channelNotFound);

    const make = async (existing: OrderRow | undefined, trx?: Knex.Transaction): Promise<{ order: OrderRow; repeat: boolean }> => {
      // a concurrent creation of the same client_order_id won the lock
      if (existing) return repeatOf(existing, wanted);
      const quote = await upstream('requote', (signal) =>
        deps.channels.requote(channel.id, { src: src.token, dst: dst.token, amountIn, promoCode: b.promo_code, signal }),
      );
      const rateBp = integrator?.feeRateBp ?? null;
      // the order must be able to succeed at its own quote: the estimate after the key's commission
      const requote = checkRequote(
        { estimatedOut: BigInt(b.main_channel_estimated_out_amount), minOut: BigInt(b.min_acceptable_out_amount) },
        quote.estimatedOut,
        amountIn,
        commissionOf(amountIn, rateBp),
        config.ORDER_QUOTE_DEVIATION_BP,
      );
      if (!requote.ok) throw bad(requote.msg);
      const fees = splitFees(amountIn, quote.platformFee, rateBp);
      // the fees stay at a Solana deposit address after the forward: under the rent-exempt minimum the chain refuses the forward
      if (srcNetwork.family === 'svm' && !solanaKeepsRent(BigInt(fees.fee_platform) + BigInt(fees.fee_integrator))) throw bad(MSG.amountBelowMinimum);
      // The order's own address, owned by the platform: the user pays it with a plain transfer,
      // the deposit is attributed by this address alone, and the platform forwards to the channel.
      // It is also the channel's refund address: the platform sends the forward, so what a
      // channel gives back returns there, and the platform refunds the user from it.
      const depositIndex = await orders.nextDepositIndex(trx);
      const depositAddress = await depositAddressAt(srcNetwork.family, depositIndex);
      const deposit = await upstream('deposit', (signal) =>
        deps.channels.createDeposit(channel.id, { src: src.token, dst: dst.token, amountIn, dstAddress: dstAddress.address, refundAddress: depositAddress, signal }),
      );
      const forwardCheck = canonicalAddressForChainType(src.token.chain_type, deposit.depositAddress);
      if (!forwardCheck.ok) {
        log.error({ msg: 'channel_deposit_address_invalid', channel: channel.id, address: deposit.depositAddress });
        throw new OrderError(502, 'quote service unavailable');
      }
      const now = new Date(clock.now());
      const row: NewOrder = {
        order_no: newOrderNo(now),
        integrator_id: integrator?.integratorId ?? null,
        key_id: integrator?.keyId ?? null,
        client_order_id: b.client_order_id ?? null,
        request_hash: createHash('sha256').update(orderIdentityText(wanted)).digest('hex'),
        src_token_id: src.token.id,
        dst_token_id: dst.token.id,
        amount_in: amountIn.toString(),
        dst_address: dstAddress.address,
        channel_id: channel.id,
        channel_kind: channel.kind,
        provider_order_id: deposit.providerOrderId,
        deposit_address: depositAddress,
        deposit_index: depositIndex,
        deposit_memo: null,
        deposit_router: null,
        deposit_chain_type: srcNetwork.chainType,
        forward_address: forwardCheck.address,
        forward_memo: deposit.memo ?? null,
        forward_router: deposit.router ?? null,
        slippage: String(b.slippage),
        estimated_out: requote.estimatedOut.toString(),
        min_acceptable_out: b.min_acceptable_out_amount,
        ...fees,
        platform_fee_rate: percentToRateSnapshot(quote.channelFeePct),
        partner_fee_rate: rateSnapshot(0),
        integrator_fee_rate: rateSnapshot(rateBp ?? 0),
        src_price_usd: price.text,
        src_price_as_of: price.asOf,
        state: 'Depositing',
        expire_at: deposit.expireAt,
        auto_cancel_at: new Date(deposit.expireAt.getTime() + config.ORDER_AUTO_CANCEL_WINDOW_MS),
        extra: {
          client_id: b.client_id ?? null,
          user_id: b.user_id ?? null,
          partner_app_id: b.partner_app_id ?? null,
          invite_code: b.invite_code ?? null,
          promo_code: b.promo_code ?? null,
          is_use_wallet: b.is_use_wallet ?? false,
          key_fallback: caller.kind === 'ok' ? null : caller.kind,
        },
      };
      return { order: await orders.insert(row, trx), repeat: false };
    };

    const result = b.client_order_id
      ? await orders.withClientOrderLock(integrator?.integratorId ?? null, b.client_order_id, (existing, trx) => make(existing, trx))
      : await make(undefined);
    await registerDeposit(result.order, srcNetwork);
    if (!result.repeat) {
      metrics.created.inc({ integrator: integrator ? 'bound' : 'none' });
      log.info({ msg: 'order_created', orderNo: result.order.order_no, integratorId: result.order.integrator_id, keyFallback: caller.kind === 'ok' ? undefined : caller.kind, channel: channel.id });
    }
    return result;
  }

  async function ownOrder(orderNo: string, caller: IntegratorIdentity): Promise<OrderRow> {
    if (orderNo.trim() === '') throw bad('order no required');
    const order = await orders.findByNo(orderNo.trim());
    if (!order) throw bad('order not found');
    if (caller.kind !== 'ok' || String(order.integrator_id) !== caller.integratorId) throw new OrderError(403, 'order does not belong to integrator');
    return order;
  }

  async function requestRefund(order: OrderRow, refundAddress: string): Promise<void> {
    const srcChainType = await reference.chainTypeOfToken(order.src_token_id);
    const address = canonicalAddressForChainType(srcChainType ?? '', refundAddress);
    if (!address.ok) throw bad('refund_address invalid');
    const now = new Date(clock.now());
    const decision = decideRefund(
      {
        state: order.state,
        amount: BigInt(order.amount_in),
        expireAt: new Date(order.expire_at),
        autoCancelAt: new Date(order.auto_cancel_at),
        refundAddress: order.refund_address,
        executionRecorded: order.execution !== null,
        refundableAmount: order.deposit_amount === null ? null : BigInt(order.deposit_amount),
      },
      address.address,
      now,
    );
    if (decision.kind === 'reject') {
      metrics.refunds.inc({ outcome: decision.error });
      throw bad(decision.error);
    }
    if (decision.kind === 'accept') {
      const changed = await orders.transition(
        order,
        decision.to ?? order.state,
        { refund_address: address.address, refund_requested_at: now },
        { event: 'refund_request', detail: { refund_address: address.address } },
      );
      if (!changed) {
        metrics.refunds.inc({ outcome: 'order_state_changed_retry' });
        throw bad('order_state_changed_retry');
      }
      log.info({ msg: 'refund_requested', orderNo: order.order_no, from: order.state, to: changed.state });
    }
    metrics.refunds.inc({ outcome: decision.kind });
  }

  return {
    async create(body, caller) {
      try {
        return await create(body, caller);
      } catch (err) {
        if (err instanceof OrderError) metrics.rejected.inc({ msg: err.status === 400 ? err.message : String(err.status) });
        throw err;
      }
    },
    ownOrder,
    requestRefund,
    extraDeposits: (order) => new OrderDepositRepository(deps.db).extras(order),
  };
}
