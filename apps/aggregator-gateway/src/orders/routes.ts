import type { RequestHandler, Response } from 'express';
import type { Redis } from 'ioredis';
import { Counter, type Registry } from 'prom-client';
import { ProviderError } from '@chainpipe/aggregator';
import { canonicalAddressForChainType, networkOfReferenceChain, type NetworkInfo } from '@chainpipe/chains';
import { TOPICS } from '@chainpipe/contracts';
import { ApiKeyRepository, type Knex } from '@chainpipe/db';
import { requestParams, sendError, sendOk, type ApiAuth, type ApiRoutes } from '@chainpipe/http';
import type { TopicProducer } from '@chainpipe/kafka';
import { OrderRepository, IntegratorRepository, type NewOrder, type OrderRow } from '@chainpipe/order-store';
import {
  commissionOf, decideRefund, deviatesBeyond, outAfterCommission, parseDecimal, percentToRateSnapshot, rateSnapshot, splitFees,
} from '@chainpipe/orders';
import { QuoteStore, ReferenceRepository, type TokenRow } from '@chainpipe/price';
import { systemClock, type Clock, type ConfigOf, type Logger } from '@chainpipe/runtime';
import { MonitoredAddressRepository, changeMessages } from '@chainpipe/tx-store';
import type { HttpAggIntegratorOrderCreate, HttpAggIntegratorOrderParams, HttpAggIntegratorRefund } from '@chainpipe/contracts';
import type { orderConfig } from './config';
import { MSG, checkRules, newOrderNo, precheck, requestHash, worthAtLeast } from './create-request';
import { creationKey, refundKey, resolveIntegratorKey, type IntegratorIdentity } from './integrator-auth';
import { ChannelTimeoutError, type OrderChannels } from './ports';
import { createdView, orderView } from './views';

export interface OrderRouteDeps {
  db: Knex;
  redis: Redis;
  producer: Pick<TopicProducer, 'publish'>;
  channels: OrderChannels;
  config: ConfigOf<typeof orderConfig>;
  logger: Logger;
  registry: Registry;
  /** Time of order creation, expiry, refund decisions and the price age check. */
  clock?: Pick<Clock, 'now'>;
}

const IDENTITY = 'integratorIdentity';
const identityOf = (res: Response): IntegratorIdentity => (res.locals[IDENTITY] as IntegratorIdentity | undefined) ?? { kind: 'none' };

/**
 * The two ways integrator keys authenticate (names for `ApiRoutes`' auth map):
 * `integratorKeyOptional` (order creation: no, unknown or disabled key, or a disabled integrator,
 * is an order without commission, never 401/403) and `integratorKey` (refunds and order reads:
 * 401 missing or invalid key, 403 disabled integrator).
 */
export function integratorAuthSchemes(db: Knex): Record<'integratorKeyOptional' | 'integratorKey', ApiAuth> {
  const repo = new IntegratorRepository(db);
  const lookup = (keyId: string) => repo.findKey(keyId);
  const optional: RequestHandler = async (req, res, next) => {
    try {
      res.locals[IDENTITY] = await resolveIntegratorKey(creationKey(req), lookup);
      next();
    } catch (err) {
      next(err);
    }
  };
  const required: RequestHandler = async (req, res, next) => {
    try {
      const identity = await resolveIntegratorKey(refundKey(req), lookup);
      if (identity.kind === 'none' || identity.kind === 'invalid') return sendError(res, 401, 'unauthorized');
      if (identity.kind === 'integrator_disabled') return sendError(res, 403, 'integrator disabled');
      res.locals[IDENTITY] = identity;
      next();
    } catch (err) {
      next(err);
    }
  };
  const description = 'an integrator key (`cpk_<key id>_<secret>`), created with `npm run admin -- integrator:key:create`';
  return {
    integratorKeyOptional: {
      handler: optional,
      scheme: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Integrator-Api-Key',
        description: `${description}. Optional: \`Authorization: ApiKey <key>\` works too; without a valid key of an active integrator the order is created without commission (never 401/403).`,
      },
      errors: {},
    },
    integratorKey: {
      handler: required,
      scheme: { type: 'apiKey', in: 'header', name: 'X-Integrator-Api-Key', description: `${description}; \`X-Integrator-Api-Key\` only.` },
      errors: { 401: 'unauthorized: missing or invalid key', 403: 'integrator disabled, or the order belongs to another integrator' },
    },
  };
}

class OrderError extends Error {
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
    depositPublishFailures: new Counter({
      name: 'chainpipe_agg_deposit_address_publish_failures_total',
      help: 'Deposit addresses stored as monitored addresses but not published to addresses.changes.v1 (the matcher picks them up at its next resync)',
      registers: [registry],
    }),
  };
}

/** POST /api/v1/integrator/orders, GET /api/v1/integrator/orders/{orderNo}, POST …/{orderNo}/request_refund. */
export function orderRoutes(api: ApiRoutes, deps: OrderRouteDeps): void {
  const clock = deps.clock ?? systemClock;
  const orders = new OrderRepository(deps.db);
  const reference = new ReferenceRepository(deps.db);
  const quotes = new QuoteStore(deps.redis);
  const monitored = new MonitoredAddressRepository(deps.db);
  const metrics = metricsOf(deps.registry);
  const log = deps.logger.child({ component: 'integrator-orders' });
  const { config } = deps;
  const minUsd = parseDecimal(config.ORDER_MIN_AMOUNT_USD);
  if (!minUsd || minUsd.negative) throw new Error(`ORDER_MIN_AMOUNT_USD ${config.ORDER_MIN_AMOUNT_USD} is not a decimal amount`);

  async function token(id: number): Promise<{ token: TokenRow; network: NetworkInfo | undefined }> {
    const [row] = await reference.tokensByIds([id]);
    if (!row) {
      // a known token on a chain that is switched off is a chain problem, not a token one
      const raw = await deps.db('price.tokens').where({ id }).first('id');
      throw bad(raw ? MSG.chainNotFound : MSG.tokenNotFound);
    }
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
      // The per-call deadline here, or the provider's own one inside the adapter.
      const timedOut = err instanceof ChannelTimeoutError || signal.aborted || (err instanceof ProviderError && err.kind === 'timeout');
      log.warn({ msg: 'channel_call_failed', what, timedOut, err: (err as Error)?.message });
      throw new OrderError(502, timedOut ? 'quote service timed out' : 'quote service unavailable');
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

  const create: RequestHandler = async (req, res) => {
    const b = req.body as HttpAggIntegratorOrderCreate;
    const identity = identityOf(res);
    const integrator = identity.kind === 'ok' ? identity : null;
    try {
      const rules = checkRules(b);
      if (!rules.ok) throw bad(rules.msg);
      const src = await token(b.src_token_id);
      const dst = await token(b.dst_token_id);
      if (!src.network) throw bad(MSG.chainNotFound); // deposits are seen only on monitored chains
      const dstAddress = canonicalAddressForChainType(dst.token.chain_type, b.dst_address);
      if (!dstAddress.ok) throw bad(MSG.dstAddressInvalid);
      const amountIn = BigInt(b.amount_in);
      const price = await priceOf(src.token);
      if (!worthAtLeast(amountIn, src.token.decimals, parseDecimal(price.text)!, minUsd)) throw bad(MSG.amountBelowMinimum);
      const channel = await deps.channels.find(b.chosen_channel_id);
      if (!channel || !channel.enabled) throw bad(MSG.channelNotFound);
      const hash = requestHash(b);

      const make = async (existing: OrderRow | undefined, trx?: Knex.Transaction): Promise<{ order: OrderRow; repeat: boolean }> => {
        if (existing) {
          if (existing.request_hash !== hash) throw bad(MSG.duplicateClientOrderId);
          return { order: existing, repeat: true };
        }
        const quote = await upstream('requote', (signal) =>
          deps.channels.requote(channel.id, { src: src.token, dst: dst.token, amountIn, promoCode: b.promo_code, signal }),
        );
        if (deviatesBeyond(BigInt(b.main_channel_estimated_out_amount), quote.estimatedOut, config.ORDER_QUOTE_DEVIATION_BP)) throw bad(MSG.quoteMismatch);
        const deposit = await upstream('deposit', (signal) =>
          deps.channels.createDeposit(channel.id, { src: src.token, dst: dst.token, amountIn, dstAddress: dstAddress.address, signal }),
        );
        const depositCheck = canonicalAddressForChainType(src.token.chain_type, deposit.depositAddress);
        if (!depositCheck.ok) {
          log.error({ msg: 'channel_deposit_address_invalid', channel: channel.id, address: deposit.depositAddress });
          throw new OrderError(502, 'quote service unavailable');
        }
        const rateBp = integrator?.feeRateBp ?? null;
        const fees = splitFees(amountIn, quote.platformFee, rateBp);
        const now = new Date(clock.now());
        const row: NewOrder = {
          order_no: newOrderNo(now),
          integrator_id: integrator?.integratorId ?? null,
          key_id: integrator?.keyId ?? null,
          client_order_id: b.client_order_id ?? null,
          request_hash: hash,
          src_token_id: src.token.id,
          dst_token_id: dst.token.id,
          amount_in: amountIn.toString(),
          dst_address: dstAddress.address,
          channel_id: channel.id,
          channel_kind: channel.kind,
          provider_order_id: deposit.providerOrderId,
          deposit_address: depositCheck.address,
          deposit_memo: deposit.memo ?? null,
          deposit_chain_type: src.network!.chainType,
          slippage: String(b.slippage),
          estimated_out: outAfterCommission(quote.estimatedOut, amountIn, commissionOf(amountIn, rateBp)).toString(),
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
            key_fallback: identity.kind === 'ok' ? null : identity.kind,
          },
        };
        return { order: await orders.insert(row, trx), repeat: false };
      };

      const { order, repeat } = b.client_order_id
        ? await orders.withClientOrderLock(integrator?.integratorId ?? null, b.client_order_id, (existing, trx) => make(existing, trx))
        : await make(undefined);
      // registered again on a repeat too: repairs a registration that failed after the insert
      await registerDeposit(order, src.network);
      if (!repeat) {
        metrics.created.inc({ integrator: integrator ? 'bound' : 'none' });
        log.info({ msg: 'order_created', orderNo: order.order_no, integratorId: order.integrator_id, keyFallback: identity.kind === 'ok' ? undefined : identity.kind, channel: channel.id });
      }
      sendOk(res, createdView(order), { message: 'ok' });
    } catch (err) {
      if (!(err instanceof OrderError)) throw err;
      metrics.rejected.inc({ msg: err.status === 400 ? err.message : String(err.status) });
      sendError(res, err.status, err.message);
    }
  };

  /** The order of the authenticated integrator, or the refund table's errors. */
  async function ownOrder(res: Response): Promise<OrderRow | undefined> {
    const { orderNo } = requestParams<HttpAggIntegratorOrderParams>(res);
    if (orderNo.trim() === '') return void sendError(res, 400, 'order no required');
    const order = await orders.findByNo(orderNo.trim());
    if (!order) return void sendError(res, 400, 'order not found');
    const identity = identityOf(res);
    if (identity.kind !== 'ok' || String(order.integrator_id) !== identity.integratorId) return void sendError(res, 403, 'order does not belong to integrator');
    return order;
  }

  const get: RequestHandler = async (_req, res) => {
    const order = await ownOrder(res);
    if (order) sendOk(res, orderView(order), { message: 'ok' });
  };

  const refund: RequestHandler = async (req, res) => {
    const order = await ownOrder(res);
    if (!order) return;
    const { refund_address: raw } = req.body as HttpAggIntegratorRefund;
    const srcChain = await deps.db('price.tokens as t').join('price.chains as c', 'c.id', 't.chain_id').where('t.id', order.src_token_id).first('c.chain_type');
    const address = canonicalAddressForChainType(srcChain?.chain_type ?? '', raw);
    if (!address.ok) return sendError(res, 400, 'refund_address invalid');
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
      return sendError(res, 400, decision.error);
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
        return sendError(res, 400, 'order_state_changed_retry');
      }
      log.info({ msg: 'refund_requested', orderNo: order.order_no, from: order.state, to: changed.state });
    }
    metrics.refunds.inc({ outcome: decision.kind });
    sendOk(res, 'ok', { message: 'ok' });
  };

  const tags = ['integrator orders'];
  const orderErrors = {
    400: 'the spec\'s order creation errors (`msg`): invalid request body, src_token_id/dst_token_id required (and `<field> required`), token not found, chain not found, channel not found, dst_address invalid, chosen_channel_id not in channels, slippage out of range, min_acceptable_out_amount too low, quote amount mismatch, amount_in below minimum, duplicate client_order_id, split orders are not supported for integrator orders',
    502: 'quote service timed out / quote service unavailable (the channel did not answer the re-quote or the deposit)',
    503: 'no fresh price of the source token (the minimum amount cannot be checked), or a dependency is down',
  };
  api.route(
    {
      method: 'post',
      path: '/api/v1/integrator/orders',
      summary: 'Create an integrator order on one channel',
      description:
        'Re-quotes the chosen channel, checks the deviation, asks the channel for a deposit address and stores the order with its fee, rate and price snapshots. `client_order_id` is idempotent per integrator (a repeat answers the same order; another payload is `duplicate client_order_id`). Without a valid key the order is created without commission.',
      tags,
      auth: 'integratorKeyOptional',
      request: {
        body: 'http/agg/integrator-order-create',
        bodyExample: {
          src_token_id: 101,
          dst_token_id: 1001,
          amount_in: '100000000000000000',
          dst_address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
          chosen_channel_id: 1,
          slippage: 0.01,
          main_channel_estimated_out_amount: '512345',
          min_acceptable_out_amount: '507221',
          channels: [{ channel_id: 1, estimated_out_str: '512345' }],
          client_order_id: 'wallet-42',
        },
      },
      preValidation: [
        (req, res, next) => {
          const c = precheck(req.body);
          if (!c.ok) return sendError(res, 400, c.msg);
          next();
        },
      ],
      ok: {
        code: 0,
        message: 'ok',
        data: 'http/agg/integrator-order-created',
        description: 'the order: deposit address, expiry, fee and rate snapshots',
        example: {
          order_id: 42,
          order_no: 'AO20261124200102a1b2c3d4e5',
          deposit_address: '0x5f2b7a4f0c0b4a3c9c0b9a8e7d6c5b4a39281706',
          deposit_memo: null,
          expire_at: '2026-11-24T20:31:02.000Z',
          fee_platform: '300000000000000',
          fee_partner: '0',
          fee_integrator: '250000000000000',
          fee_platform_original: '550000000000000',
          platform_fee_rate: '0.0030',
          partner_fee_rate: '0.0000',
          integrator_fee_rate: '0.0025',
        },
      },
      errors: orderErrors,
    },
    create,
  );

  // An order number no order can have (a NUL) is an unknown order, as the spec answers it.
  const orderLookup = { params: ['orderNo'], notFound: ((_req, res) => sendError(res, 400, 'order not found')) as RequestHandler };
  const refundErrors = {
    400: 'order no required, refund_address required, refund_address invalid, order not found, order_already_finalized, order_not_in_refundable_state, order_not_expired_yet, order_auto_cancel_window_passed, refund_requires_manual_confirmation, no_amount_to_refund, refund_address_cannot_be_changed, order_state_changed_retry',
  };
  api.route(
    {
      method: 'get',
      path: '/api/v1/integrator/orders/:orderNo',
      summary: 'One order of the integrator',
      description: 'State, amounts, fee snapshots, deposit and payout transaction hashes and timestamps (DECISIONS.md). Same key rules as the refund.',
      tags,
      auth: 'integratorKey',
      request: { params: 'http/agg/integrator-order-params', lookup: orderLookup },
      ok: { code: 0, message: 'ok', data: 'http/agg/integrator-order', description: 'the order' },
      errors: { 400: 'order not found', 403: 'order does not belong to integrator' },
    },
    get,
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/integrator/orders/:orderNo/request_refund',
      summary: 'Request the refund of an order that did not succeed',
      description:
        'Records the refund address (checked against the source chain). Idempotent for the same address; another address after a refund record is refund_address_cannot_be_changed. Concurrent requests and state changes are serialized on the order version: the loser gets order_state_changed_retry.',
      tags,
      auth: 'integratorKey',
      request: { params: 'http/agg/integrator-order-params', lookup: orderLookup, body: 'http/agg/integrator-refund', bodyExample: { refund_address: '0x5f2b7a4f0c0b4a3c9c0b9a8e7d6c5b4a39281706' }, bodyRequired: false },
      preValidation: [
        (req, res, next) => {
          const body = req.body as Record<string, unknown> | undefined;
          if (body === undefined || typeof body !== 'object' || body === null || typeof body.refund_address !== 'string' || body.refund_address.trim() === '') {
            return sendError(res, 400, 'refund_address required');
          }
          next();
        },
      ],
      ok: { code: 0, message: 'ok', data: { const: 'ok' }, description: 'the refund address is recorded', example: 'ok' },
      errors: refundErrors,
    },
    refund,
  );
}
