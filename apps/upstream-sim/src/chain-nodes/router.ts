import express, { type RequestHandler, type Router } from 'express';
import { Counter, type Registry } from 'prom-client';
import { sendError } from '@chainpipe/http';
import type { Logger } from '@chainpipe/runtime';
import { faultOf, SIMULATED_FAILURE } from '../faults';
import { answerJsonRpc, RPC_INTERNAL_ERROR, type CallRecord } from '../json-rpc';
import { isObject, type JsonObject } from './json';
import type { ReorgResult } from './block-producer';
import type { ChainNode, ChainNodes } from './nodes';
import { WalletError } from './tron-node';

export interface ChainNodesRouterDeps {
  chainNodes: ChainNodes;
  logger: Logger;
  registry: Registry;
  bodyLimitBytes: number;
  maxBatch: number;
  /** The block producer's reorg (unset: the route answers 404). */
  reorg?: (network: string, depth: number, opts: { requeue?: boolean }) => ReorgResult;
}

/** The header saying in which address format a Tron `/wallet/*` answer is (docs/development.md, "The upstream simulator"). */
export const ADDRESS_FORMAT_HEADER = 'x-sim-address-format';

function chainMetrics(registry: Registry) {
  return new Counter({
    name: 'chainpipe_upstream_sim_chain_calls_total',
    help: 'Chain node calls answered by the simulator, by network, method and outcome',
    labelNames: ['network', 'method', 'outcome'],
    registers: [registry],
  });
}

/**
 * `POST /rpc/<network>`: the network's node over JSON-RPC. `/rpc/tron-mainnet/wallet/<method>`:
 * java-tron's HTTP API (POST with a JSON body, or GET with query parameters). Control: `PUT
 * /sim/chain/<network>/broadcasts` `{refuse: boolean}` makes an EVM or the Bitcoin node refuse
 * every `eth_sendRawTransaction` / `sendrawtransaction` (an outage of the broadcast path);
 * `POST /sim/chain/<network>/reorg` `{depth, requeue?}` replaces its last `depth` blocks (a reorg).
 */
export function chainNodesRouter(deps: ChainNodesRouterDeps): Router {
  const router = express.Router();
  const calls = chainMetrics(deps.registry);
  const log = deps.logger.child({ component: 'chain-nodes' });
  // The body is read as text: a body that is not JSON must get a JSON-RPC parse error, not a 400.
  const text = express.text({ type: () => true, limit: deps.bodyLimitBytes, defaultCharset: 'utf-8' });

  const nodeOf: RequestHandler = (req, res, next) => {
    const node = deps.chainNodes.nodes.get(String(req.params.network));
    if (!node) return sendError(res, 404, `unknown network ${JSON.stringify(String(req.params.network).slice(0, 64))}`);
    res.locals.node = node;
    next();
  };

  const count = (node: ChainNode, known: (m: string) => boolean, records: CallRecord[]) => {
    for (const r of records) {
      // Only method names the node knows become label values: input must not mint series.
      const method = r.method !== null && known(r.method) ? r.method : 'unknown';
      calls.inc({ network: node.network.network, method, outcome: r.outcome });
      if (r.outcome === 'internal_error') log.error({ msg: 'rpc_method_failed', network: node.network.network, method, err: r.error });
    }
  };

  router.post('/rpc/:network', nodeOf, text, (req, res) => {
    const node: ChainNode = res.locals.node;
    const body = typeof req.body === 'string' ? req.body : '';
    const forcedError = faultOf(res) === 'error' ? { code: node.rpc.dialect === 'bitcoin-core' ? -1 : RPC_INTERNAL_ERROR, message: SIMULATED_FAILURE } : undefined;
    const reply = answerJsonRpc(node.rpc, body, { maxBatch: deps.maxBatch, forcedError });
    count(node, (m) => node.rpc.methods.has(m), reply.calls);
    res.status(reply.status);
    if (reply.body === null) return void res.end();
    res.type('application/json').send(reply.body);
  });

  const wallet: RequestHandler = (req, res) => {
    const node: ChainNode = res.locals.node;
    const name = String(req.params.method);
    const method = node.wallet?.get(name);
    if (!node.wallet || !method) return sendError(res, 404, `no route for ${req.method} ${req.path}`);
    const answer = (body: unknown, outcome: CallRecord['outcome']) => {
      calls.inc({ network: node.network.network, method: `wallet/${name}`, outcome });
      res.status(200).type('application/json').send(JSON.stringify(body));
    };
    if (faultOf(res) === 'error') return answer({ Error: SIMULATED_FAILURE }, 'rpc_error');
    let args: JsonObject = { ...(req.query as JsonObject) };
    const raw = typeof req.body === 'string' ? req.body.trim() : '';
    if (raw !== '') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch (err) {
        return answer({ Error: `class com.alibaba.fastjson.JSONException : ${(err as Error).message.slice(0, 200)}` }, 'invalid');
      }
      if (!isObject(parsed)) return answer({ Error: 'class com.alibaba.fastjson.JSONException : request body is not a JSON object' }, 'invalid');
      args = { ...args, ...parsed };
    }
    try {
      const result = method(args);
      if (result.format) res.setHeader(ADDRESS_FORMAT_HEADER, result.format);
      answer(result.body, 'ok');
    } catch (err) {
      if (err instanceof WalletError) return answer({ Error: err.message }, 'rpc_error');
      log.error({ msg: 'wallet_method_failed', network: node.network.network, method: name, err });
      answer({ Error: 'internal error' }, 'internal_error');
    }
  };
  router.get('/rpc/:network/wallet/:method', nodeOf, wallet);
  router.post('/rpc/:network/wallet/:method', nodeOf, text, wallet);

  // a node that takes no transactions for a while: `{refuse: true|false}`
  router.put('/sim/chain/:network/broadcasts', nodeOf, express.json(), (req, res) => {
    const node: ChainNode = res.locals.node;
    const refuse = (req.body as { refuse?: unknown } | undefined)?.refuse;
    const ledger = node.ledger ?? node.bitcoinLedger;
    if (!ledger || typeof refuse !== 'boolean') return sendError(res, 400, 'a network that takes transactions (EVM, Bitcoin mainnet) and refuse (boolean) are required');
    ledger.refuseBroadcasts(refuse);
    res.json({ network: node.network.network, refuse });
  });

  // a chain reorganisation of the head: `{depth: n, requeue?: boolean}` (docs/development.md)
  router.post('/sim/chain/:network/reorg', nodeOf, express.json(), (req, res) => {
    const node: ChainNode = res.locals.node;
    const body = (req.body ?? {}) as { depth?: unknown; requeue?: unknown };
    if (!deps.reorg) return sendError(res, 404, 'no block producer runs: chains do not reorganise');
    if (typeof body.depth !== 'number' || !Number.isInteger(body.depth) || body.depth < 1) return sendError(res, 400, 'depth (an integer of at least 1) is required');
    if (body.requeue !== undefined && typeof body.requeue !== 'boolean') return sendError(res, 400, 'requeue is a boolean');
    try {
      const result = deps.reorg(node.network.network, body.depth, { requeue: body.requeue === true });
      res.json({ network: node.network.network, displaced: result.displaced, blocks: result.produced.map((p) => ({ number: p.number, hash: p.block.hash })) });
    } catch (err) {
      sendError(res, 409, (err as Error).message);
    }
  });

  router.all('/rpc/:network', nodeOf, (_req, res) => {
    res.setHeader('allow', 'POST');
    sendError(res, 405, 'method not allowed: JSON-RPC takes POST');
  });
  return router;
}
