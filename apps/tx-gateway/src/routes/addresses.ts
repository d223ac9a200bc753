import express, { type RequestHandler, type Response, type Router } from 'express';
import { Counter } from 'prom-client';
import { TOPICS } from '@chainpipe/contracts';
import { PRINCIPAL, sendError, sendOk, validateBody, type Principal } from '@chainpipe/http';
import { errorMessage } from '@chainpipe/runtime';
import type { TxGatewayDeps } from '../deps';
import {
  changeMessages,
  parseContains,
  parsePatch,
  parseWallets,
  type AddressChange,
  type ContainsBody,
  type Parsed,
  type PatchBody,
  type WalletsBody,
} from '../management/address-requests';
import { MonitoredAddressRepository } from '../management/monitored-addresses.repository';

type AddressDeps = Pick<TxGatewayDeps, 'db' | 'contracts' | 'producer' | 'logger' | 'registry' | 'now'>;

function addressMetrics(deps: AddressDeps) {
  return {
    written: new Counter({
      name: 'chainpipe_tx_monitored_address_writes_total',
      help: 'Addresses named in add/remove requests, by operation and chain type',
      labelNames: ['op', 'chain_type'],
      registers: [deps.registry],
    }),
    publishFailures: new Counter({
      name: 'chainpipe_tx_address_change_publish_failures_total',
      help: 'Address changes stored but not published to addresses.changes.v1 (the matcher must resync from the table)',
      registers: [deps.registry],
    }),
  };
}

/**
 * Monitored addresses: add, batch-delete, patch and the global contains, under both layouts.
 *
 * The table is the source of truth. After the rows are written, the change is published to
 * addresses.changes.v1 (keyed by app_id) for the matcher; the spec says a failed sync must not
 * block the local write, so a publish failure still answers success, and is logged and counted
 * for the operator (the matcher rebuilds its view from the table).
 */
export function addressesRoutes(deps: TxGatewayDeps): Router {
  const router = express.Router();
  const repo = new MonitoredAddressRepository(deps.db);
  const metrics = addressMetrics(deps);
  const log = deps.logger.child({ component: 'addresses' });

  async function apply(res: Response, changes: AddressChange[]): Promise<void> {
    const { appId } = res.locals[PRINCIPAL] as Principal;
    const result = await repo.apply(appId, changes, async () => {
      // Stamped under the application's lock: changed_at grows in publish order.
      const messages = changeMessages(appId, changes, deps.now());
      if (messages.length === 0) return;
      try {
        await deps.producer.publish(
          TOPICS.addressesChanges,
          messages.map((value) => ({ key: appId, value })),
        );
      } catch (err) {
        metrics.publishFailures.inc(messages.length);
        log.warn({ msg: 'address_change_publish_failed', appId, chainTypes: messages.map((m) => m.chain_type), err: errorMessage(err) });
      }
    });
    for (const c of changes) {
      if (c.adds.length) metrics.written.inc({ op: 'add', chain_type: c.chainType }, c.adds.length);
      if (c.removes.length) metrics.written.inc({ op: 'remove', chain_type: c.chainType }, c.removes.length);
    }
    log.info({
      msg: 'monitored_addresses_changed',
      appId,
      chainTypes: changes.map((c) => c.chainType),
      adds: changes.reduce((n, c) => n + c.adds.length, 0),
      removes: changes.reduce((n, c) => n + c.removes.length, 0),
      inserted: result.inserted,
      deleted: result.deleted,
    });
    sendOk(res, 'success');
  }

  /** Schema first (shape, sizes), then the chain-specific checks of the pure parser. */
  const handle = <B, T>(schemaId: string, parse: (body: B) => Parsed<T>, run: (res: Response, value: T) => Promise<void>): RequestHandler[] => [
    validateBody(deps.contracts, schemaId),
    async (req, res) => {
      const parsed = parse(req.body as B);
      if (!parsed.ok) return sendError(res, 400, parsed.error);
      await run(res, parsed.value);
    },
  ];

  const add = handle('http/tx/addresses-wallets', (b: WalletsBody) => parseWallets(b, 'add'), apply);
  const remove = handle('http/tx/addresses-wallets', (b: WalletsBody) => parseWallets(b, 'remove'), apply);
  const patch = handle('http/tx/addresses-patch', (b: PatchBody) => parsePatch(b), (res, change) => apply(res, [change]));
  const contains = handle('http/tx/addresses-contains', (b: ContainsBody) => parseContains(b), async (res, q) => {
    sendOk(res, { is_exist: await repo.existsAnywhere(q.chainType, q.address) });
  });

  router.post('/tx/api/v1/addresses', ...add);
  router.post('/tx/api/v1/addresses/batch-delete', ...remove);
  router.patch('/tx/api/v1/addresses', ...patch);
  router.post('/tx/api/v1/addresses/contains', ...contains);
  // Earlier layout: same operations and bodies.
  router.post('/api/v1/address/add', ...add);
  router.post('/api/v1/address/remove', ...remove);
  router.post('/api/v1/address', ...patch);
  router.post('/api/v1/address/contains', ...contains);
  return router;
}
