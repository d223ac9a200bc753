import { CHAIN_FIXTURES_DIR } from '@chainpipe/testing';
import { answerJsonRpc, type RpcNode } from '../src/json-rpc';
import type { FixtureDoc } from '../src/chain-nodes/catalog';
import { loadFixtureDocs } from '../src/chain-nodes/load-fixtures';
import { buildChainNodes, type ChainNode, type ChainNodes } from '../src/chain-nodes/nodes';

let docs: FixtureDoc[] | undefined;
let nodes: ChainNodes | undefined;

/** Every chain fixture, parsed once per test run. */
export function fixtureDocs(): FixtureDoc[] {
  docs ??= loadFixtureDocs(CHAIN_FIXTURES_DIR);
  return docs;
}

export function chainNodes(): ChainNodes {
  nodes ??= buildChainNodes(fixtureDocs(), { clientVersion: 'test' });
  return nodes;
}

export function nodeOf(network: string): ChainNode {
  const node = chainNodes().nodes.get(network);
  if (!node) throw new Error(`no node for ${network}`);
  return node;
}

export interface CallOutcome {
  result?: any;
  error?: { code: number; message: string };
}

/** One call through the real JSON-RPC layer, as a client would make it. */
export function call(node: RpcNode, method: string, params?: unknown): CallOutcome {
  const request = node.dialect === 'bitcoin-core' ? { jsonrpc: '1.0', id: 'test', method, params } : { jsonrpc: '2.0', id: 1, method, params };
  const reply = answerJsonRpc(node, JSON.stringify(request));
  const body = JSON.parse(reply.body!);
  return body.error ? { error: body.error } : { result: body.result };
}

export function result(node: RpcNode, method: string, params?: unknown): any {
  const out = call(node, method, params);
  if (out.error) throw new Error(`${method} failed: ${JSON.stringify(out.error)}`);
  return out.result;
}
