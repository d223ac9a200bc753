import { expect } from 'chai';
import { tronBase58ToHex, tronHexToBase58 } from '@chainpipe/chains';
import { readFixtureJson } from '@chainpipe/testing';
import { parseTronPayload } from '../src/tron';
import type { ChainContext, NormalizedTx, ParseResult } from '../src/types';

// Raw fixture access in tests: the expectations below are computed by walking this JSON.
type Json = any;

const ctx: ChainContext = { chainType: 'tron', chainId: 1, family: 'tvm', nativeSymbol: 'TRX', nativeDecimals: 6 };

const HEX_BLOCK = 'tron/tron-mainnet-61132092.wallet_getblockbynum_full_hex.json';
const VISIBLE_BLOCK = 'tron/tron-mainnet-60836289.wallet_getblockbynum_full_visible.json';
const VISIBLE_INFO_661F = 'tron/tron-mainnet-60836289.wallet_gettransactioninfobyid_661f1df8_visible.json';
const VISIBLE_TX_661F = 'tron/tron-mainnet-60836289.wallet_gettransactionbyid_661f1df8_visible.json';
const DOCS_BLOCK = 'tron/tron-mainnet-30864544.wallet_getblockbynum_TRUNCATED-docs-example.json';
const INFOS_30864600 = 'tron/tron-mainnet-30864600.wallet_gettransactioninfobyblocknum_TRUNCATED-docs-example.json';
const INFO_0AF7 = 'tron/tron-mainnet-30864600.wallet_gettransactioninfobyid_0af79242.json';
const EVM_BLOCK = 'tron/tron-mainnet-39507235.jsonrpc_eth_getBlockByNumber_hashes_TRUNCATED-docs-example.json';
const EVM_TX = 'tron/tron-mainnet-39507235.jsonrpc_eth_getTransactionByHash_usdt_0x9ff75c01-docs-example.json';
const EVM_RECEIPT = 'tron/tron-mainnet-39507235.jsonrpc_eth_getTransactionReceipt_usdt_0x9ff75c01-docs-example.json';
const TRONGRID_LIST = 'tron/tron-mainnet.trongrid_v1_accounts_transactions_25tx.json';

function b58(hex: string): string {
  const a = tronHexToBase58(hex);
  if (!a) throw new Error(`test data: not a Tron hex address: ${hex}`);
  return a;
}

/** 32-byte ABI word / topic → Base58 (low 20 bytes). */
function wordToB58(word: string): string {
  return b58('41' + word.replace(/^0x/, '').slice(24));
}

function word(data: string, i: number): string {
  return data.slice(8 + i * 64, 8 + (i + 1) * 64);
}

function contractOf(tx: Json): Json {
  return tx.raw_data.contract[0];
}

function onlyBlockTxs(r: ParseResult): NormalizedTx[] {
  expect(r.blocks).to.have.length(1);
  return r.blocks[0].transactions;
}

function byHash(txs: NormalizedTx[], hash: string): NormalizedTx {
  const found = txs.find((t) => t.tx_hash === hash);
  expect(found, `record ${hash}`).to.not.equal(undefined);
  return found as NormalizedTx;
}

/** Independent walk: expected record facts for node-API transactions whose addresses are given by `addr`. */
function checkNativeBlock(raw: Json, records: NormalizedTx[], addr: (v: string) => string, assetId: (v: string) => string): void {
  expect(records.map((r) => r.tx_hash)).to.deep.equal(raw.transactions.map((t: Json) => t.txID));
  raw.transactions.forEach((tx: Json, i: number) => {
    const rec = records[i];
    const c = contractOf(tx);
    const v = c.parameter.value;
    expect(rec.tx_index).to.equal(i);
    expect(rec.height).to.equal(raw.block_header.raw_data.number);
    expect(rec.block_hash).to.equal(raw.blockID);
    expect(rec.tx_time).to.equal(raw.block_header.raw_data.timestamp / 1000);
    expect(rec.sender).to.equal(addr(v.owner_address));
    expect(rec.tx_status).to.equal('success'); // every ret is SUCCESS in both complete blocks
    expect(rec.tx_fee).to.equal(null); // no info / receipt delivered
    expect(rec.gas_limit).to.equal(tx.raw_data.fee_limit === undefined ? null : String(tx.raw_data.fee_limit));
    if (c.type === 'TransferContract') {
      expect(rec.transfer_type).to.equal('native');
      expect(rec.receiver).to.equal(addr(v.to_address));
      expect(rec.amount).to.equal(String(v.amount));
      expect(rec.symbol).to.equal('TRX');
      expect(rec.decimals).to.equal(6);
      expect(rec.token_transfers).to.deep.equal([]);
    } else if (c.type === 'TransferAssetContract') {
      expect(rec.transfer_type).to.equal('token');
      expect(rec.receiver).to.equal(addr(v.to_address));
      expect(rec.token_transfers).to.have.length(1);
      const t = rec.token_transfers[0];
      expect(t.standard).to.equal('trc10');
      expect(t.token_contract_address).to.equal(assetId(v.asset_name));
      expect(t.amount).to.equal(String(v.amount));
      expect(t.from_address).to.equal(addr(v.owner_address));
      expect(t.to_address).to.equal(addr(v.to_address));
    } else if (c.type === 'TriggerSmartContract') {
      const data: string = v.data;
      expect(rec.transfer_type).to.equal('token');
      expect(rec.receiver).to.equal(addr(v.contract_address));
      expect(rec.method_id).to.equal('0x' + data.slice(0, 8));
      expect(rec.token_transfers).to.have.length(1);
      const t = rec.token_transfers[0];
      expect(t.standard).to.equal('trc20');
      expect(t.token_contract_address).to.equal(addr(v.contract_address));
      if (data.startsWith('a9059cbb')) {
        expect(t.from_address).to.equal(addr(v.owner_address));
        expect(t.to_address).to.equal(wordToB58(word(data, 0)));
        expect(t.amount).to.equal(BigInt('0x' + word(data, 1)).toString());
      } else {
        expect(data.startsWith('23b872dd')).to.equal(true);
        expect(t.from_address).to.equal(wordToB58(word(data, 0)));
        expect(t.to_address).to.equal(wordToB58(word(data, 1)));
        expect(t.amount).to.equal(BigInt('0x' + word(data, 2)).toString());
      }
    } else {
      expect(rec.transfer_type).to.equal('contract_call');
      expect(rec.token_transfers).to.deep.equal([]);
      const counterparty = v.receiver_address ?? v.account_address;
      expect(rec.receiver).to.equal(counterparty === undefined ? null : addr(counterparty));
    }
  });
}

function countTypes(raw: Json): Record<string, number> {
  const out: Record<string, number> = {};
  for (const tx of raw.transactions) out[contractOf(tx).type] = (out[contractOf(tx).type] ?? 0) + 1;
  return out;
}

/** Converts a visible=true block into its visible=false form (hex addresses, hex asset names). */
function toHexForm(block: Json): Json {
  const copy = structuredClone(block);
  copy.block_header.raw_data.witness_address = tronBase58ToHex(copy.block_header.raw_data.witness_address);
  for (const tx of copy.transactions) {
    for (const c of tx.raw_data.contract) {
      const v = c.parameter.value;
      for (const key of Object.keys(v)) {
        if (key.endsWith('_address')) v[key] = tronBase58ToHex(v[key]);
      }
      if (c.type === 'TransferAssetContract') v.asset_name = Buffer.from(v.asset_name, 'latin1').toString('hex');
    }
  }
  return copy;
}

describe('parseTronPayload', () => {
  describe('node block, hex addresses (61132092, complete)', () => {
    const raw: Json = readFixtureJson(HEX_BLOCK);
    const result = parseTronPayload([raw], ctx);
    const records = onlyBlockTxs(result);

    it('parses every transaction without issues and reports the block', () => {
      expect(result.issues).to.deep.equal([]);
      expect(records).to.have.length(raw.transactions.length);
      expect(records).to.have.length(281); // SOURCES.md: 281 txs
      expect(result.blocks[0].block).to.deep.equal({
        height: raw.block_header.raw_data.number,
        hash: raw.blockID,
        parent_hash: raw.block_header.raw_data.parentHash,
        time: Math.floor(raw.block_header.raw_data.timestamp / 1000),
      });
      expect(result.blocks[0].block.time).to.equal(1714038858); // header timestamp 1714038858000 ms
    });

    it('maps each contract type from the raw JSON (hex → Base58 via tronHexToBase58)', () => {
      checkNativeBlock(raw, records, b58, (name) => Buffer.from(name, 'hex').toString('latin1'));
    });

    it('totals the TRX transfers and counts the token kinds as SOURCES.md describes', () => {
      const types = countTypes(raw);
      const native = records.filter((r) => r.transfer_type === 'native');
      expect(native).to.have.length(types.TransferContract).and.to.have.length(114);
      const total = native.reduce((s, r) => s + BigInt(r.amount as string), 0n);
      expect(total).to.equal(33_584_662_276n); // 33,584.662276 TRX in sun
      const trc20 = records.flatMap((r) => r.token_transfers).filter((t) => t.standard === 'trc20');
      const trc10 = records.flatMap((r) => r.token_transfers).filter((t) => t.standard === 'trc10');
      expect(trc20).to.have.length(112);
      expect(trc10).to.have.length(11);
      expect(new Set(trc20.map((t) => t.token_contract_address))).to.deep.equal(new Set(['TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t']));
      expect(records.filter((r) => r.method_id === '0xa9059cbb')).to.have.length(111);
      expect(records.filter((r) => r.method_id === '0x23b872dd')).to.have.length(1);
    });

    it('decodes the hex TRC-10 asset_name to the token id', () => {
      // First TransferAssetContract: asset_name "31303035303233" = ASCII "1005023".
      const first = records.find((r) => r.token_transfers[0]?.standard === 'trc10');
      expect(first?.token_transfers[0].token_contract_address).to.equal('1005023');
    });

    it('reads the transferFrom call data (tx 7df1e546)', () => {
      const rec = byHash(records, '7df1e546069955f836ba3b4497c65d379b659feda281a3e1b545e0279d317a17');
      // data words: from 6685f4ec…, to c9c502f0…, amount 0xa6e49c00 = 2800000000
      expect(rec.token_transfers[0].from_address).to.equal(b58('416685f4eca960dc8021a9a3638de9ad155b68f902'));
      expect(rec.token_transfers[0].to_address).to.equal(b58('41c9c502f00f147ecbb0ae4ca919854931a6a1e285'));
      expect(rec.token_transfers[0].amount).to.equal('2800000000');
      expect(rec.sender).to.equal(b58('41f0c5ed9e061e49b69e410d94d8c9328111ac624a'));
      expect(rec.gas_limit).to.equal('100000000');
    });

    it('is deterministic', () => {
      expect(parseTronPayload([readFixtureJson(HEX_BLOCK)], ctx)).to.deep.equal(result);
    });
  });

  describe('node block, Base58 addresses (60836289, complete)', () => {
    const raw: Json = readFixtureJson(VISIBLE_BLOCK);
    const result = parseTronPayload([raw], ctx);
    const records = onlyBlockTxs(result);

    it('keeps visible addresses and plain TRC-10 ids as given', () => {
      expect(result.issues).to.deep.equal([]);
      checkNativeBlock(raw, records, (a) => a, (name) => name);
    });

    it('totals the TRX transfers and the TRC-20 calls', () => {
      const native = records.filter((r) => r.transfer_type === 'native');
      expect(native).to.have.length(countTypes(raw).TransferContract).and.to.have.length(39);
      expect(native.reduce((s, r) => s + BigInt(r.amount as string), 0n)).to.equal(2_951_248_798n);
      const trc20 = records.flatMap((r) => r.token_transfers).filter((t) => t.standard === 'trc20');
      expect(trc20).to.have.length(82); // 79 + 2 USDT, 1 on TFkyVCGC…
      expect(trc20.filter((t) => t.token_contract_address !== 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t')).to.have.length(1);
      expect(records.flatMap((r) => r.token_transfers).filter((t) => t.standard === 'trc10')).to.have.length(23);
    });

    it('gives the same records for the same block in hex form', () => {
      const hexForm = toHexForm(raw);
      expect(contractOf(hexForm.transactions[0]).parameter.value.owner_address).to.match(/^41[0-9a-f]{40}$/);
      expect(contractOf(hexForm.transactions[0]).parameter.value.asset_name).to.equal('31303034393337');
      const fromHex = parseTronPayload([hexForm], ctx);
      expect(fromHex).to.deep.equal(result);
    });

    it('takes fee, energy and log-based transfers from a transaction info (separate item or alongside)', () => {
      const info: Json = readFixtureJson(VISIBLE_INFO_661F);
      const asItem = parseTronPayload([raw, info], ctx);
      const alongside = parseTronPayload([{ block: raw, transaction_infos: [info] }], ctx);
      expect(asItem.issues).to.deep.equal([]);
      expect(alongside).to.deep.equal(asItem);
      const rec = byHash(onlyBlockTxs(asItem), info.id);
      expect(rec.tx_index).to.equal(20); // SOURCES.md: tx #20 of the block
      expect(rec.tx_fee).to.equal('27600900');
      expect(rec.gas_used).to.equal(String(info.receipt.energy_usage_total));
      expect(rec.tx_status).to.equal('success');
      const log = info.log[0];
      expect(rec.token_transfers).to.have.length(1);
      expect(rec.token_transfers[0]).to.include({
        from_address: wordToB58(log.topics[1]),
        to_address: wordToB58(log.topics[2]),
        token_contract_address: log.address,
        amount: BigInt('0x' + log.data).toString(),
        standard: 'trc20',
        log_index: 0,
      });
      // The call data (whose address word carries a 0x41 prefix) decodes to the same transfer.
      const guessed = byHash(records, info.id).token_transfers[0];
      expect([guessed.from_address, guessed.to_address, guessed.amount]).to.deep.equal([
        rec.token_transfers[0].from_address,
        rec.token_transfers[0].to_address,
        rec.token_transfers[0].amount,
      ]);
      // Other transactions have no info: fee stays unknown.
      expect(onlyBlockTxs(asItem).filter((r) => r.tx_fee !== null).map((r) => r.tx_hash)).to.deep.equal([info.id]);
    });

    it('lets the info receipt.result override ret (failed → no token transfers)', () => {
      const info: Json = { ...readFixtureJson(VISIBLE_INFO_661F), log: [] };
      info.receipt = { ...info.receipt, result: 'OUT_OF_ENERGY' };
      const rec = byHash(onlyBlockTxs(parseTronPayload([raw, info], ctx)), info.id);
      expect(rec.tx_status).to.equal('failed');
      expect(rec.token_transfers).to.deep.equal([]);
      expect(rec.transfer_type).to.equal('contract_call');
      expect(rec.tx_fee).to.equal('27600900');
    });

    it('parses a bare gettransactionbyid object as an item', () => {
      const tx: Json = readFixtureJson(VISIBLE_TX_661F);
      const r = parseTronPayload([tx], ctx);
      expect(r.issues).to.deep.equal([]);
      const [rec] = onlyBlockTxs(r);
      const v = contractOf(tx).parameter.value;
      expect(rec.tx_hash).to.equal(tx.txID);
      expect(rec.height).to.equal(null); // gettransactionbyid carries no block number
      expect(rec.sender).to.equal(v.owner_address);
      expect(rec.receiver).to.equal(v.contract_address);
      // data word 0 = 000…0041dc2c107c…: the 0x41 inside the padding is ignored
      expect(rec.token_transfers[0].to_address).to.equal(b58('41dc2c107c0f8633d8236daa46d0e640e2c375f6ac'));
      expect(rec.token_transfers[0].amount).to.equal(BigInt('0x8e277354').toString());
    });
  });

  describe('ret other than SUCCESS', () => {
    it('marks the transaction failed and drops its token transfer', () => {
      const raw: Json = readFixtureJson(HEX_BLOCK);
      const idx = raw.transactions.findIndex((t: Json) => contractOf(t).type === 'TriggerSmartContract');
      raw.transactions[idx].ret = [{ contractRet: 'REVERT' }];
      const rec = onlyBlockTxs(parseTronPayload([raw], ctx))[idx];
      expect(rec.tx_hash).to.equal(raw.transactions[idx].txID);
      expect(rec.tx_status).to.equal('failed');
      expect(rec.token_transfers).to.deep.equal([]);
      expect(rec.transfer_type).to.equal('contract_call');
      expect(rec.method_id).to.equal('0x' + contractOf(raw.transactions[idx]).parameter.value.data.slice(0, 8));
    });
  });

  describe('docs example block 30864544', () => {
    it('gives one 50 TRX transfer', () => {
      const raw: Json = readFixtureJson(DOCS_BLOCK);
      const [rec] = onlyBlockTxs(parseTronPayload([raw], ctx));
      expect(rec).to.include({
        tx_hash: '979e0823f455f3b67d65b351052f0265233f422792d31d5dbeb7c24737dd5556',
        height: 30864544,
        tx_time: 1623055923,
        sender: b58('41c33eeefda1059afba41d86759e281bcb851edfc8'),
        receiver: b58('4158c85b7b6a5118beb3b23c14fcb2f3551a81d79a'),
        amount: '50000000',
        transfer_type: 'native',
        tx_status: 'success',
      });
    });
  });

  describe('gettransactioninfobyblocknum (30864600)', () => {
    const infos: Json[] = readFixtureJson(INFOS_30864600);
    const info: Json = readFixtureJson(INFO_0AF7);
    // The fixture has no block 30864600: a one-transaction node block is built from the info's
    // own facts (id, block number/time, caller = Transfer topic 1, contract_address).
    const block: Json = {
      blockID: '0000000001d6f4d8' + '0'.repeat(48),
      block_header: { raw_data: { number: info.blockNumber, timestamp: info.blockTimeStamp } },
      transactions: [
        {
          txID: info.id,
          raw_data: {
            contract: [
              {
                type: 'TriggerSmartContract',
                parameter: { value: { owner_address: '41' + info.log[0].topics[1].slice(24), contract_address: info.contract_address } },
              },
            ],
          },
          ret: [{ contractRet: 'SUCCESS' }],
        },
      ],
    };

    it('reads the native log form (20-byte hex address, bare topics) and the fee-less info', () => {
      for (const payload of [[block, infos], [{ block, transaction_infos: infos }], [block, info]]) {
        const r = parseTronPayload(payload, ctx);
        expect(r.issues).to.deep.equal([]);
        const [rec] = onlyBlockTxs(r);
        expect(rec.tx_time).to.equal(1623056091);
        expect(rec.tx_fee).to.equal('0'); // info has no `fee` key: proto3 omits a zero fee
        expect(rec.gas_used).to.equal('14631'); // receipt.energy_usage_total
        expect(rec.tx_status).to.equal('success');
        expect(rec.token_transfers).to.have.length(1);
        expect(rec.token_transfers[0]).to.include({
          token_contract_address: b58('41a614f803b6fd780986a42c78ec9c7f77e6ded13c'),
          from_address: b58('41e4b8075df69297bc24cc4bbaf48cd17206e1f62c'),
          to_address: b58('410d0707963952f2fba59dd06f2b425ace40b492fe'),
          amount: BigInt('0x1fb6e57f').toString(),
          standard: 'trc20',
        });
      }
    });

    it('reports infos whose block is not in the payload', () => {
      const r = parseTronPayload([infos], ctx);
      expect(r.blocks).to.deep.equal([]);
      expect(r.issues).to.have.length(infos.length);
      expect(r.issues.every((i) => i.block_index === 0)).to.equal(true);
    });
  });

  describe('eth JSON-RPC view (39507235)', () => {
    const blockEnv: Json = readFixtureJson(EVM_BLOCK);
    const txEnv: Json = readFixtureJson(EVM_TX);
    const receiptEnv: Json = readFixtureJson(EVM_RECEIPT);
    const tx = txEnv.result;
    const receipt = receiptEnv.result;
    const log = receipt.logs[0];

    function checkUsdtRecord(rec: NormalizedTx): void {
      expect(rec.tx_hash).to.equal(tx.hash.slice(2));
      expect(rec.height).to.equal(0x25ad523);
      expect(rec.block_hash).to.equal(blockEnv.result.hash.slice(2));
      expect(rec.tx_time).to.equal(Math.floor(0x17ff4639bb8 / 1000));
      expect(rec.tx_index).to.equal(0x3e);
      expect(rec.sender).to.equal(b58('41' + receipt.from.slice(2)));
      expect(rec.receiver).to.equal('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'); // 0xa614f8… = USDT
      expect(rec.tx_status).to.equal('success');
      expect(rec.gas_used).to.equal(String(0x73bf));
      expect(rec.tx_fee).to.equal(String(0x73bf * 0x118));
      expect(rec.transfer_type).to.equal('token');
      expect(rec.token_transfers).to.have.length(1);
      expect(rec.token_transfers[0]).to.include({
        from_address: wordToB58(log.topics[1]),
        to_address: wordToB58(log.topics[2]),
        token_contract_address: b58('41' + log.address.slice(2)),
        amount: BigInt(log.data).toString(),
        standard: 'trc20',
        log_index: 0,
      });
    }

    it('parses a block with full transactions and receipts', () => {
      const item = { block: { ...blockEnv.result, transactions: [tx] }, receipts: [receipt] };
      const r = parseTronPayload([item], ctx);
      expect(r.issues).to.deep.equal([]);
      const [rec] = onlyBlockTxs(r);
      checkUsdtRecord(rec);
      expect(rec.gas_limit).to.equal(String(0x73bf));
      expect(rec.amount).to.equal('0');
      expect(rec.method_id).to.equal(null); // input is "0x" in this view
      expect(rec.nonce).to.equal(null);
      expect(r.blocks[0].block.parent_hash).to.equal(blockEnv.result.parentHash.slice(2));
    });

    it('builds a record from the receipt when the block lists hashes only', () => {
      const hashOnly = { ...blockEnv, result: { ...blockEnv.result, transactions: [tx.hash] } };
      const r = parseTronPayload([hashOnly, receiptEnv], ctx);
      expect(r.issues).to.deep.equal([]);
      const [rec] = onlyBlockTxs(r);
      checkUsdtRecord(rec);
      expect(rec.amount).to.equal(null);
    });

    it('reports hash-only transactions without a receipt', () => {
      const r = parseTronPayload([blockEnv], ctx);
      expect(onlyBlockTxs(r)).to.deep.equal([]);
      expect(r.blocks[0].block.height).to.equal(0x25ad523);
      expect(r.issues.map((i) => i.tx_hash)).to.deep.equal(blockEnv.result.transactions.map((h: string) => h.slice(2)));
    });
  });

  describe('composite Block with Receipts + Native Block', () => {
    // The fixtures hold no composite delivery; one is assembled from block 60836289 and an
    // eth-format receipt derived from the real info 661f1df8 (same log; gasUsed =
    // energy_usage_total 64895; effectiveGasPrice = energy_fee 27255900 / 64895 = 420 sun).
    const native: Json = readFixtureJson(VISIBLE_BLOCK);
    const info: Json = readFixtureJson(VISIBLE_INFO_661F);
    const toEvmHex = (b: string): string => '0x' + (tronBase58ToHex(b) as string).slice(2);
    const receipt: Json = {
      transactionHash: '0x' + info.id,
      status: '0x1',
      gasUsed: '0x' + (64895).toString(16),
      effectiveGasPrice: '0x' + (420).toString(16),
      logs: info.log.map((l: Json) => ({ address: toEvmHex(l.address), topics: l.topics.map((t: string) => '0x' + t), data: '0x' + l.data })),
    };
    const usdtCalls = native.transactions.filter((t: Json) => contractOf(t).type === 'TriggerSmartContract' && t.txID !== info.id);
    const failedReceipt: Json = { transactionHash: '0x' + usdtCalls[0].txID, status: '0x0', gasUsed: '0x0', logs: [] };
    const evmBlock: Json = {
      number: '0x' + native.block_header.raw_data.number.toString(16),
      hash: '0x' + native.blockID,
      timestamp: '0x' + native.block_header.raw_data.timestamp.toString(16),
      transactions: [],
    };
    const result = parseTronPayload([{ block: evmBlock, receipts: [receipt, failedReceipt], native_block: native }], ctx);
    const records = onlyBlockTxs(result);

    it('uses the native block for contracts and the receipts for status, fee and logs', () => {
      expect(result.issues).to.deep.equal([]);
      expect(records).to.have.length(native.transactions.length);
      const rec = byHash(records, info.id);
      expect(rec.tx_fee).to.equal(String(info.receipt.energy_fee)); // 64895 × 420
      expect(rec.gas_price).to.equal('420');
      expect(rec.token_transfers[0]).to.include({
        from_address: wordToB58(info.log[0].topics[1]),
        to_address: wordToB58(info.log[0].topics[2]),
        token_contract_address: info.log[0].address,
        amount: BigInt('0x' + info.log[0].data).toString(),
        log_index: 0,
      });
      expect(rec.sender).to.equal(contractOf(native.transactions[20]).parameter.value.owner_address);
    });

    it('lets a failed receipt override ret SUCCESS', () => {
      const rec = byHash(records, usdtCalls[0].txID);
      expect(usdtCalls[0].ret[0].contractRet).to.equal('SUCCESS');
      expect(rec.tx_status).to.equal('failed');
      expect(rec.token_transfers).to.deep.equal([]);
      expect(rec.tx_fee).to.equal(null); // no effectiveGasPrice in that receipt
    });

    it('still reads TRX transfers from the native block', () => {
      const native39 = records.filter((r) => r.transfer_type === 'native');
      expect(native39).to.have.length(39);
    });
  });

  describe('TronGrid transaction list', () => {
    const list: Json = readFixtureJson(TRONGRID_LIST);
    const result = parseTronPayload([list], ctx);
    const records = result.blocks.flatMap((b) => b.transactions);

    it('parses all list items, grouped by block number', () => {
      expect(result.issues).to.deep.equal([]);
      expect(records.map((r) => r.tx_hash)).to.have.members(list.data.map((t: Json) => t.txID));
      const heights = [...new Set(list.data.map((t: Json) => t.blockNumber))];
      expect(result.blocks.map((b) => b.block.height)).to.deep.equal(heights);
    });

    it('takes fee from ret[0].fee and time from block_timestamp', () => {
      for (const tx of list.data) {
        const rec = byHash(records, tx.txID);
        expect(rec.tx_fee).to.equal(String(tx.ret[0].fee));
        expect(rec.tx_time).to.equal(tx.block_timestamp / 1000);
        expect(rec.height).to.equal(tx.blockNumber);
        expect(rec.sender).to.equal(b58(contractOf(tx).parameter.value.owner_address));
      }
      const trc10 = records.flatMap((r) => r.token_transfers).filter((t) => t.standard === 'trc10');
      expect(trc10.map((t) => [t.token_contract_address, t.amount])).to.deep.equal([['1002000', '7639170000000']]);
      expect(records.filter((r) => r.transfer_type === 'native')).to.have.length(7);
      expect(records.filter((r) => r.transfer_type === 'token')).to.have.length(18);
    });
  });

  describe('envelopes and bad items', () => {
    it('unwraps JSON-RPC envelopes and batches', () => {
      const raw: Json = readFixtureJson(DOCS_BLOCK);
      const bare = parseTronPayload([raw], ctx);
      expect(parseTronPayload([{ jsonrpc: '2.0', id: 1, result: raw }], ctx)).to.deep.equal(bare);
      expect(parseTronPayload([[{ jsonrpc: '2.0', id: 1, result: raw }]], ctx)).to.deep.equal(bare);
    });

    it('turns errors and junk into issues, keeping the good block', () => {
      const raw: Json = readFixtureJson(DOCS_BLOCK);
      const r = parseTronPayload([{ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'boom' } }, null, 7, raw], ctx);
      expect(r.blocks).to.have.length(1);
      expect(r.blocks[0].transactions).to.have.length(1);
      expect(r.issues.map((i) => i.block_index)).to.deep.equal([0, 1, 2]);
      expect(r.issues[0].reason).to.contain('boom');
      expect(parseTronPayload(null as unknown as unknown[], ctx).issues).to.have.length(1);
    });

    it('drops only the malformed transaction', () => {
      const raw: Json = readFixtureJson(HEX_BLOCK);
      raw.transactions[5].txID = 42;
      raw.transactions[6].raw_data.contract = [];
      const r = parseTronPayload([raw], ctx);
      expect(onlyBlockTxs(r)).to.have.length(279);
      expect(r.issues.map((i) => i.tx_index)).to.deep.equal([5, 6]);
      expect(r.issues[1].tx_hash).to.equal(raw.transactions[6].txID);
    });
  });
});
