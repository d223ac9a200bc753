import type { Response } from 'express';
import { Counter } from 'prom-client';
import { TOPICS, type HttpTxAddressesContainsResult } from '@chainpipe/contracts';
import { PRINCIPAL, sendError, sendOk, type ApiRoutes, type Principal } from '@chainpipe/http';
import { errorMessage } from '@chainpipe/runtime';
import { EXAMPLE_ADDRESS } from '../api-examples';
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
import { MonitoredAddressRepository } from '@chainpipe/tx-store';
import { declareOperation } from './layouts';

type AddressDeps = Pick<TxGatewayDeps, 'db' | 'contracts' | 'producer' | 'logger' | 'registry' | 'clock'>;

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
export function addressesRoutes(api: ApiRoutes, deps: TxGatewayDeps): void {
  const repo = new MonitoredAddressRepository(deps.db);
  const metrics = addressMetrics(deps);
  const log = deps.logger.child({ component: 'addresses' });

  async function apply(res: Response, changes: AddressChange[]): Promise<void> {
    const { appId } = res.locals[PRINCIPAL] as Principal;
    const result = await repo.apply(appId, changes, async () => {
      // Stamped under the application's lock: changed_at grows in publish order.
      const messages = changeMessages(appId, changes, deps.clock.now());
      if (messages.length === 0) return;
      try {
        await deps.producer.publish(
          TOPICS.addressesChanges,
          messages.map((value) => ({ value })),
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

  /** After the schema (shape, sizes): the chain-specific checks of the pure parser. */
  const handle =
    <B, T>(parse: (body: B) => Parsed<T>, run: (res: Response, value: T) => Promise<void>) =>
    async (req: { body: B }, res: Response): Promise<void> => {
      const parsed = parse(req.body);
      if (!parsed.ok) return sendError(res, 400, parsed.error);
      await run(res, parsed.value);
    };

  const add = handle((b: WalletsBody) => parseWallets(b, 'add'), apply);
  const remove = handle((b: WalletsBody) => parseWallets(b, 'remove'), apply);
  const patch = handle((b: PatchBody) => parsePatch(b), (res, change) => apply(res, [change]));
  const contains = handle((b: ContainsBody) => parseContains(b), async (res, q) => {
    sendOk(res, { is_exist: await repo.existsAnywhere(q.chainType, q.address) } satisfies HttpTxAddressesContainsResult);
  });

  const tags = ['monitored addresses'];
  const done = { data: { const: 'success' }, description: 'stored (`data` is `success`)', example: 'success' } as const;
  const invalid = { 400: 'request validation failed, or an address is not valid for its chain (the message names it)' };
  const addSpec = {
    summary: 'Monitor addresses',
    description: 'At most 1000 addresses per request over all wallets. Each address is stored in its canonical form; the change is published to addresses.changes.v1.',
    tags,
    auth: 'apiKey',
    request: { body: 'http/tx/addresses-wallets', bodyExample: { wallets: [{ chain_type: 'ethereum', address: [EXAMPLE_ADDRESS] }] } },
    ok: done,
    errors: invalid,
  } as const;
  const removeSpec = { ...addSpec, summary: 'Stop monitoring addresses', description: 'Same body as add; the addresses\' new transactions are no longer pushed to the application.' };
  const patchSpec = {
    summary: 'Add and remove addresses of one chain',
    tags,
    auth: 'apiKey',
    request: { body: 'http/tx/addresses-patch', bodyExample: { chain_type: 'ethereum', adds: [EXAMPLE_ADDRESS], removes: [] } },
    ok: done,
    errors: invalid,
  } as const;
  const containsSpec = {
    summary: 'Is an address monitored by any application',
    description: 'Checks the global address table; not scoped to the key\'s application.',
    tags,
    auth: 'apiKey',
    request: { body: 'http/tx/addresses-contains', bodyExample: { chain_type: 'ethereum', address: EXAMPLE_ADDRESS } },
    ok: { data: 'http/tx/addresses-contains-result', description: 'whether the address is monitored', example: { is_exist: true } },
    errors: invalid,
  } as const;
  declareOperation(api, { method: 'post', path: '/tx/api/v1/addresses', ...addSpec }, add, { path: '/api/v1/address/add' });
  declareOperation(api, { method: 'post', path: '/tx/api/v1/addresses/batch-delete', ...removeSpec }, remove, { path: '/api/v1/address/remove' });
  declareOperation(api, { method: 'patch', path: '/tx/api/v1/addresses', ...patchSpec }, patch, { method: 'post', path: '/api/v1/address' });
  declareOperation(api, { method: 'post', path: '/tx/api/v1/addresses/contains', ...containsSpec }, contains, { path: '/api/v1/address/contains' });
}
