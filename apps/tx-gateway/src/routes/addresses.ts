import type { Response } from 'express';
import type { HttpTxAddressesContainsResult } from '@chainpipe/contracts';
import { PRINCIPAL, sendError, sendOk, type ApiRoutes, type Principal } from '@chainpipe/http';
import { EXAMPLE_ADDRESS } from '../api-examples';
import {
  parseContains,
  parsePatch,
  parseWallets,
  type AddressChange,
  type ContainsBody,
  type Parsed,
  type PatchBody,
  type WalletsBody,
} from '../management/address-requests';
import type { AddressUseCases } from '../use-cases/addresses';
import { declareOperation } from './layouts';

/**
 * Monitored addresses: add, batch-delete, patch and the global contains, under both layouts,
 * over the address use-cases (which write the table and publish the change to
 * addresses.changes.v1; a publish failure still answers success).
 */
export function addressesRoutes(api: ApiRoutes, addresses: AddressUseCases): void {
  async function apply(res: Response, changes: AddressChange[]): Promise<void> {
    const { appId } = res.locals[PRINCIPAL] as Principal;
    await addresses.change(appId, changes);
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
    sendOk(res, { is_exist: await addresses.monitoredAnywhere(q.chainType, q.address) } satisfies HttpTxAddressesContainsResult);
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
