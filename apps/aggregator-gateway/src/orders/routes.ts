import type { RequestHandler, Response } from 'express';
import type { Knex } from '@chainpipe/db';
import { requestParams, sendError, sendOk, type ApiAuth, type ApiRoutes, type HandlerFor } from '@chainpipe/http';
import { IntegratorRepository } from '@chainpipe/order-store';
import { precheck } from './create-request';
import { creationKey, refundKey, resolveIntegratorKey, type IntegratorIdentity } from './integrator-auth';
import { OrderError, type OrderService } from './service';
import { createdView, orderView } from './views';

const IDENTITY = 'integratorIdentity';
const identityOf = (res: Response): IntegratorIdentity => (res.locals[IDENTITY] as IntegratorIdentity | undefined) ?? { kind: 'none' };
/** The integrator key a request authenticated with, for per-key rate limits. */
const keyOf = (res: Response): string | undefined => {
  const identity = identityOf(res);
  return identity.kind === 'ok' ? identity.keyId : undefined;
};

/** The rate limit of order creation (a name in the module's `ApiRoutes` rate limits). */
export const ORDER_CREATE_LIMIT = 'orderCreate';

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
      keyOf,
    },
    integratorKey: {
      handler: required,
      keyOf,
      scheme: { type: 'apiKey', in: 'header', name: 'X-Integrator-Api-Key', description: `${description}; \`X-Integrator-Api-Key\` only.` },
      errors: { 401: 'unauthorized: missing or invalid key', 403: 'integrator disabled, or the order belongs to another integrator' },
    },
  };
}

/** A use-case's refusal as the spec's error envelope; anything else goes to the app's error handler. */
async function answering(res: Response, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (err) {
    if (!(err instanceof OrderError)) throw err;
    sendError(res, err.status, err.message);
  }
}

/** POST /api/v1/integrator/orders, GET /api/v1/integrator/orders/{orderNo}, POST …/{orderNo}/request_refund. */
export function orderRoutes(api: ApiRoutes, service: OrderService): void {
  const create: HandlerFor<{ body: 'http/agg/integrator-order-create' }> = (req, res) =>
    answering(res, async () => {
      const { order } = await service.create(req.body, identityOf(res));
      sendOk(res, createdView(order), { message: 'ok' });
    });

  const get: HandlerFor<{ params: 'http/agg/integrator-order-params' }> = (_req, res) =>
    answering(res, async () => {
      const order = await service.ownOrder(requestParams(res).orderNo, identityOf(res));
      sendOk(res, orderView(order, await service.extraDeposits(order)), { message: 'ok' });
    });

  const refund: HandlerFor<{ params: 'http/agg/integrator-order-params'; body: 'http/agg/integrator-refund' }> = (req, res) =>
    answering(res, async () => {
      const order = await service.ownOrder(requestParams(res).orderNo, identityOf(res));
      await service.requestRefund(order, req.body.refund_address);
      sendOk(res, 'ok', { message: 'ok' });
    });

  const tags = ['integrator orders'];
  const orderErrors = {
    400: 'the spec\'s order creation errors (`msg`): invalid request body, src_token_id/dst_token_id required (and `<field> required`), token not found, chain not found, channel not found, dst_address invalid, chosen_channel_id not in channels, slippage out of range, min_acceptable_out_amount too low, quote amount mismatch, amount_in below minimum, duplicate client_order_id, split orders are not supported for integrator orders',
    502: 'quote service timed out / quote service unavailable (the channel did not answer the re-quote or the deposit)',
    503: 'no fresh price of the source token (the minimum amount cannot be checked), no deposit address (the signing service of Solana addresses did not answer), or a dependency is down',
  };
  api.route(
    {
      method: 'post',
      path: '/api/v1/integrator/orders',
      summary: 'Create an integrator order on one channel',
      description:
        'Re-quotes the chosen channel, checks the deviation, asks the channel for a deposit address and stores the order with its fee, rate and price snapshots. `client_order_id` is idempotent per integrator: a repeat with the same source and destination token, `amount_in`, `dst_address` and `chosen_channel_id` answers the existing order before any re-quote, price or minimum check (a refreshed quote is still the same order); other terms are `duplicate client_order_id`. Without a valid key the order is created without commission.',
      tags,
      auth: 'integratorKeyOptional',
      rateLimit: ORDER_CREATE_LIMIT,
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
      description: 'State, amounts, fee snapshots, deposit and payout transaction hashes and timestamps (docs/decisions.md#d22). Same key rules as the refund.',
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
