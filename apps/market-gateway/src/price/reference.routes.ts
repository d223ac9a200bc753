import express, { type Router } from 'express';
import { sendOk } from '@chainpipe/http';
import { DEFAULT_LIMIT, MAX_LIMIT, ReferenceRepository, chainItem, fiatItem, positiveIntParam, tokenItem, type TokenRow } from '@chainpipe/price';
import type { PriceDeps } from './deps';
import { PriceCode, sendPriceError } from './envelope';

const one = (v: unknown): unknown => (Array.isArray(v) ? v[0] : v);
const present = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';

/**
 * Reference data: chains, tokens (three modes), platform search, fiats. Read from Postgres on
 * every request: these tables are small and an operator import shows at once.
 */
export function referenceRoutes(deps: Pick<PriceDeps, 'db'>): Router {
  const router = express.Router();
  const repo = new ReferenceRepository(deps.db);

  router.get('/chains', async (_req, res) => {
    const rows = await repo.listChains();
    sendOk(res, { total: rows.length, items: rows.map(chainItem) });
  });

  router.get('/chains/:id_or_name', async (req, res) => {
    const row = await repo.findChain(String(req.params.id_or_name));
    if (!row) return sendPriceError(res, 200, PriceCode.chainNotFound, 'chain not found');
    sendOk(res, { total: 1, items: [chainItem(row)] });
  });

  router.get('/tokens', async (req, res) => {
    const chainIdRaw = one(req.query.chain_id);
    const addressRaw = one(req.query.address);
    const exact = (rows: TokenRow[]) => sendOk(res, { total: rows.length, page: 1, limit: rows.length, items: rows.map(tokenItem) });
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
    sendOk(res, { total, page: page.value, limit: limit.value, items: rows.map(tokenItem) });
  });

  router.get('/tokens/platforms/:keyword', async (req, res) => {
    const rows = await repo.searchPlatforms(String(req.params.keyword));
    sendOk(res, { total: rows.length, items: rows.map(tokenItem) });
  });

  router.get('/fiats', async (_req, res) => {
    const rows = await repo.listFiats();
    sendOk(res, { total: rows.length, items: rows.map(fiatItem) });
  });

  return router;
}
