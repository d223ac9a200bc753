import type { HttpPriceChainList, HttpPriceTokenList, HttpPriceTokenPage } from '@chainpipe/contracts';
import { sendOk, type ApiRoutes } from '@chainpipe/http';
import { DEFAULT_LIMIT, MAX_LIMIT, chainItem, fiatItem, positiveIntParam, tokenItem, type TokenRow } from '@chainpipe/price';
import { ReferenceRepository } from '@chainpipe/price-store';
import { EXAMPLE_CHAIN, EXAMPLE_FIAT, EXAMPLE_TOKEN } from './api-examples';
import type { PriceDeps } from './deps';
import { PRICE_AUTH, PRICE_PREFIX, PriceCode, sendPriceError } from './envelope';

const one = (v: unknown): unknown => (Array.isArray(v) ? v[0] : v);
const present = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';
const TAGS = ['reference data'];

/**
 * Reference data: chains, tokens (three modes), platform search, fiats. Read from Postgres on
 * every request: these tables are small and an operator import shows at once.
 */
export function referenceRoutes(api: ApiRoutes, deps: Pick<PriceDeps, 'db'>): void {
  const repo = new ReferenceRepository(deps.db);

  api.route(
    {
      method: 'get',
      path: `${PRICE_PREFIX}/chains`,
      summary: 'Supported chains',
      tags: TAGS,
      auth: PRICE_AUTH,
      ok: { data: 'http/price/chain-list', description: '`{ total, items }` of chain items', example: { total: 1, items: [EXAMPLE_CHAIN] } },
    },
    async (_req, res) => {
      const rows = await repo.listChains();
      sendOk(res, { total: rows.length, items: rows.map(chainItem) } satisfies HttpPriceChainList);
    },
  );

  api.route(
    {
      method: 'get',
      path: `${PRICE_PREFIX}/chains/:id_or_name`,
      summary: 'One chain by internal id or name',
      description: 'An unknown chain is still HTTP 200, with `code` 20002, `msg` `chain not found` and `data` an empty string.',
      tags: TAGS,
      auth: PRICE_AUTH,
      // A name no chain can have (a NUL) is an unknown chain.
      request: { path: 'http/price/chain-path', lookup: { params: ['id_or_name'], notFound: (_req, res) => sendPriceError(res, 200, PriceCode.chainNotFound, 'chain not found') } },
      ok: {
        data: 'http/price/chain-list',
        description: '`{ total: 1, items }` with the chain',
        example: { total: 1, items: [EXAMPLE_CHAIN] },
        businessErrors: '`code` 20002 `chain not found` for an unknown chain',
      },
    },
    async (req, res) => {
      const row = await repo.findChain(String(req.params.id_or_name));
      if (!row) return sendPriceError(res, 200, PriceCode.chainNotFound, 'chain not found');
      sendOk(res, { total: 1, items: [chainItem(row)] } satisfies HttpPriceChainList);
    },
  );

  api.route(
    {
      method: 'get',
      path: `${PRICE_PREFIX}/tokens`,
      summary: 'Tokens: a page of all, a chain’s native token, or an exact match',
      description:
        'No `chain_id` nor `address`: a page of active tokens (`page` from 1, `limit` 1–1000, default 100). `chain_id` alone: the chain’s native token. `chain_id` and `address`: the exact token. Exact modes answer `page` 1 and `limit` = the number of items. A bad value: 400, `code` 20001, the message naming the parameter.',
      tags: TAGS,
      auth: PRICE_AUTH,
      request: {
        query: 'http/price/tokens-query',
        checkedByHandler: true,
        // An address no token can have (a NUL) is an exact match of nothing.
        lookup: { params: ['address'], notFound: (_req, res) => sendOk(res, { total: 0, page: 1, limit: 0, items: [] } satisfies HttpPriceTokenPage) },
      },
      ok: { data: 'http/price/token-page', description: '`{ total, page, limit, items }` of token items', example: { total: 51, page: 1, limit: 1, items: [EXAMPLE_TOKEN] } },
      errors: { 400: 'code 20001: a parameter is not a positive integer or out of range' },
    },
    async (req, res) => {
      const chainIdRaw = one(req.query.chain_id);
      const addressRaw = one(req.query.address);
      const exact = (rows: TokenRow[]) => sendOk(res, { total: rows.length, page: 1, limit: rows.length, items: rows.map(tokenItem) } satisfies HttpPriceTokenPage);
      let chainId: number | null = null;
      if (present(chainIdRaw)) {
        if (!/^\s*\d{1,9}\s*$/.test(chainIdRaw)) return sendPriceError(res, 400, PriceCode.missingParameter, 'chain_id must be an integer');
        chainId = Number(chainIdRaw.trim());
      }
      if (present(addressRaw)) return exact(await repo.tokensByAddress(addressRaw, chainId));
      if (chainId !== null) return exact(await repo.nativeToken(chainId));
      const page = positiveIntParam('page', one(req.query.page), 1);
      if (!page.ok) return sendPriceError(res, 400, PriceCode.missingParameter, page.error);
      const limit = positiveIntParam('limit', one(req.query.limit), DEFAULT_LIMIT, MAX_LIMIT);
      if (!limit.ok) return sendPriceError(res, 400, PriceCode.missingParameter, limit.error);
      const [total, rows] = await Promise.all([repo.countTokens(), repo.pageTokens(page.value, limit.value)]);
      sendOk(res, { total, page: page.value, limit: limit.value, items: rows.map(tokenItem) } satisfies HttpPriceTokenPage);
    },
  );

  api.route(
    {
      method: 'get',
      path: `${PRICE_PREFIX}/tokens/platforms/:keyword`,
      summary: 'A token across chains, by contract address, name or symbol',
      tags: TAGS,
      auth: PRICE_AUTH,
      // A keyword no token can have (a NUL) finds nothing.
      request: { path: 'http/price/platform-path', lookup: { params: ['keyword'], notFound: (_req, res) => sendOk(res, { total: 0, items: [] } satisfies HttpPriceTokenList) } },
      ok: { data: 'http/price/token-list', description: '`{ total, items }` of token items', example: { total: 1, items: [EXAMPLE_TOKEN] } },
    },
    async (req, res) => {
      const rows = await repo.searchPlatforms(String(req.params.keyword));
      sendOk(res, { total: rows.length, items: rows.map(tokenItem) } satisfies HttpPriceTokenList);
    },
  );

  api.route(
    {
      method: 'get',
      path: `${PRICE_PREFIX}/fiats`,
      summary: 'Supported fiat currencies',
      tags: TAGS,
      auth: PRICE_AUTH,
      ok: { data: 'http/price/fiat-list', description: '`{ total, items }` of fiat items', example: { total: 1, items: [EXAMPLE_FIAT] } },
    },
    async (_req, res) => {
      const rows = await repo.listFiats();
      sendOk(res, { total: rows.length, items: rows.map(fiatItem) });
    },
  );
}
