import { expect } from 'chai';
import { networkByName } from '@chainpipe/chains';
import { parseEvmPayload, type NormalizedTx } from '@chainpipe/tx-parsers';
import { loadContracts } from '@chainpipe/contracts';
import { FIXTURE_NETWORKS, bitcoinBlockItem, evmBlockItem, parseFixture, readFixtureJson, solanaBlockItem, tronBlockItem, type FixtureFamily } from '@chainpipe/testing';
import { toListRecord, toTransactionResult, toV2Record } from '../src/records';

type Json = any;

const BLOCK = readFixtureJson<Json>('evm/eth-mainnet-1755635.eth_getBlockByNumber_full.json').result;
const TOKEN_RECEIPT = readFixtureJson<Json>('evm/eth-mainnet-1755635.eth_getTransactionReceipt_0x2e3dcd05.json').result;
const NATIVE_RECEIPT = readFixtureJson<Json>('evm/eth-mainnet-1755635.eth_getTransactionReceipt_0x9a5437ec.json').result;
const ETH = networkByName('ethereum-mainnet')!;

function parsed(): NormalizedTx[] {
  const ctx = { chainType: ETH.chainType, chainId: ETH.chainId, family: ETH.family, nativeSymbol: ETH.nativeSymbol, nativeDecimals: ETH.nativeDecimals };
  const result = parseEvmPayload([{ block: BLOCK, receipts: [TOKEN_RECEIPT, NATIVE_RECEIPT] }], ctx);
  return result.blocks.flatMap((b) => b.transactions);
}

const hex = (v: string) => BigInt(v).toString();

/** Field names of the spec's list format ("Transaction record, list format"). */
const SPEC_LIST_FIELDS = [
  'chain_type', 'chain_id', 'height', 'tx_time', 'tx_hash', 'tx_version', 'sender', 'receiver', 'fee_payer', 'transfer_type',
  'amount', 'symbol', 'decimals', 'tx_status', 'tx_fee', 'gas_limit', 'gas_used', 'gas_price', 'max_fee_per_gas',
  'max_priority_fee_per_gas', 'nonce', 'method_id', 'method_call', 'l1_origin_hash', 'token_transfers', 'from_details',
  'to_details', 'internal_transactions',
];

/** Field names of the spec's V2 table: renamed ones, the snake_case ones it keeps, and "also present". */
const SPEC_V2_FIELDS = [
  'txhash', 'txTime', 'txStatus', 'txFee', 'gasLimit', 'gasUsed', 'gasPrice', 'methodId', 'methodCall', 'l1OriginHash',
  'fromDetails', 'toDetails', 'internalTransactionDetails', 'tokenTransferDetails',
  'chain_type', 'chain_id', 'height', 'fee_payer', 'transfer_type', 'max_fee_per_gas', 'max_priority_fee_per_gas',
  'listenAddress', 'is_reorg_resend', 'sender', 'receiver', 'nonce', 'symbol', 'decimals', 'amount',
];

describe('records: list and V2 formats', () => {
  const [tokenTx, nativeTx] = parsed();
  const [rawTokenTx, rawNativeTx] = BLOCK.transactions;

  it('list format has every spec field, plus id (a number) and block_hash / tx_index', () => {
    const rec = toListRecord({ id: '4711', is_reorg_resend: false, record: nativeTx });
    expect(Object.keys(rec)).to.include.members(SPEC_LIST_FIELDS);
    expect(Object.keys(rec).filter((k) => !SPEC_LIST_FIELDS.includes(k)).sort()).to.deep.equal(['block_hash', 'id', 'tx_index']);
    expect(rec.id).to.equal(4711);
  });

  it('list format carries the transaction as the node reported it (plain ETH transfer)', () => {
    const rec = toListRecord({ id: '1', is_reorg_resend: false, record: nativeTx });
    expect(rec.tx_hash).to.equal(rawNativeTx.hash);
    expect(rec.sender).to.equal(rawNativeTx.from);
    expect(rec.receiver).to.equal(rawNativeTx.to);
    expect(rec.amount).to.equal(hex(rawNativeTx.value));
    expect(rec.height).to.equal(Number(BLOCK.number));
    expect(rec.tx_time).to.equal(Number(BLOCK.timestamp));
    expect(rec.block_hash).to.equal(BLOCK.hash);
    expect(rec.tx_index).to.equal(Number(rawNativeTx.transactionIndex));
    expect(rec.tx_fee).to.equal((BigInt(NATIVE_RECEIPT.gasUsed) * BigInt(rawNativeTx.gasPrice)).toString());
    expect(rec.transfer_type).to.equal('native');
    expect(rec.chain_type).to.equal('ethereum');
    expect(rec.chain_id).to.equal(1);
  });

  it('V2 has exactly the spec fields (plus txVersion), with txTime in milliseconds', () => {
    const v2 = toV2Record(nativeTx, false);
    expect(Object.keys(v2).sort()).to.deep.equal([...SPEC_V2_FIELDS, 'txVersion'].sort());
    expect(v2.txTime).to.equal(Number(BLOCK.timestamp) * 1000);
    expect(v2.txhash).to.equal(rawNativeTx.hash);
    expect(v2.txStatus).to.equal('success');
    expect(v2.gasPrice).to.equal(hex(rawNativeTx.gasPrice));
    expect(v2.gasLimit).to.equal(hex(rawNativeTx.gas));
    expect(v2.gasUsed).to.equal(hex(NATIVE_RECEIPT.gasUsed));
    expect(v2.nonce).to.equal(hex(rawNativeTx.nonce));
    expect(v2.listenAddress).to.equal(null);
    expect(v2.is_reorg_resend).to.equal(false);
    // None of the list names the V2 table renames may leak through.
    for (const old of ['tx_hash', 'tx_time', 'tx_status', 'tx_fee', 'gas_limit', 'gas_used', 'gas_price', 'method_id', 'method_call', 'l1_origin_hash', 'from_details', 'to_details', 'internal_transactions', 'token_transfers']) {
      expect(v2).not.to.have.property(old);
    }
  });

  it('V2 tokenTransferDetails are the token transfers of the receipt logs; is_reorg_resend comes from the row', () => {
    const v2 = toV2Record(tokenTx, true);
    const log = TOKEN_RECEIPT.logs[0];
    expect(v2.tokenTransferDetails).to.have.length(1);
    const t = v2.tokenTransferDetails[0];
    expect(t.token_contract_address).to.equal(log.address);
    expect(t.from_address).to.equal('0x' + log.topics[1].slice(26));
    expect(t.to_address).to.equal('0x' + log.topics[2].slice(26));
    expect(t.amount).to.equal(hex(log.data));
    expect(v2.methodId).to.equal(rawTokenTx.input.slice(0, 10));
    expect(v2.is_reorg_resend).to.equal(true);
  });

  it('a transaction without a time keeps txTime null (not 0, not NaN)', () => {
    const v2 = toV2Record({ ...nativeTx, tx_time: null }, false);
    expect(v2.txTime).to.equal(null);
  });
});

describe('TransactionResult and the record schemas, on a real block of every chain family', () => {
  const contracts = loadContracts();
  const families: Array<[FixtureFamily, Json]> = [
    ['evm', evmBlockItem()],
    ['svm', solanaBlockItem()],
    ['tvm', tronBlockItem()],
    ['utxo', bitcoinBlockItem()],
  ];

  for (const [family, item] of families) {
    it(`${family}: every record maps to a V2 push, a TransactionResult and a webhook body that satisfy their schemas`, () => {
      const txs = parseFixture(family, item, networkByName(FIXTURE_NETWORKS[family])!).transactions;
      expect(txs.length).to.be.greaterThan(0);
      for (const tx of txs) {
        const push = { id: 'm1', time: 1, type: 'transaction', code: 0, msg: 'success', data: toV2Record(tx, false, [tx.tx_hash]) };
        expect(contracts.validate('ws/tx/transaction-push', push), tx.tx_hash).to.deep.equal({ ok: true });
        expect(contracts.validate('common/transaction-result', toTransactionResult(tx)), tx.tx_hash).to.deep.equal({ ok: true });
      }
      const body = txs.slice(0, 100).map(toTransactionResult);
      expect(contracts.validate('webhook/tx/transaction-batch', body)).to.deep.equal({ ok: true });
      expect(contracts.validate('webhook/tx/transaction-batch', [])).to.have.property('ok', false);
    });
  }

  it('TransactionResult: camelCase, chain family as chainType, txTime in ms, PascalCase transfer types', () => {
    const [tokenTx, nativeTx] = parsed();
    const r = toTransactionResult(nativeTx);
    const raw = BLOCK.transactions[1];
    expect(r.chainType).to.equal('evm');
    expect(r.chainId).to.equal(1);
    expect(r.txHash).to.equal(raw.hash);
    expect(r.txTime).to.equal(Number(BLOCK.timestamp) * 1000);
    expect(r.amount).to.equal(hex(raw.value));
    expect(r.transferType).to.equal('NativeCoin');
    expect(toTransactionResult(tokenTx).transferType).to.equal('Token');
    const log = TOKEN_RECEIPT.logs[0];
    const t = toTransactionResult(tokenTx).tokenTransferDetails[0];
    expect(t.from).to.equal('0x' + log.topics[1].slice(26));
    expect(t.to).to.equal('0x' + log.topics[2].slice(26));
    expect(t.tokenContractAddress).to.equal(log.address);
  });

  it('TransactionResult omits the optional fields a chain lacks and keeps nulls of the others', () => {
    const [, nativeTx] = parsed();
    const r = toTransactionResult({ ...nativeTx, fee_payer: null, tx_version: null, l1_origin_hash: null, symbol: null });
    const json = JSON.parse(JSON.stringify(r));
    expect(json).not.to.have.property('feePayer');
    expect(json).not.to.have.property('txVersion');
    expect(json).not.to.have.property('l1OriginHash');
    expect(json).not.to.have.property('bizStatus');
    expect(json.symbol).to.equal(null);
    const withL1 = toTransactionResult({ ...nativeTx, l1_origin_hash: '0xabc', fee_payer: '0xdef' });
    expect(withL1.l1OriginHash).to.equal('0xabc');
    expect(withL1.feePayer).to.equal('0xdef');
  });
});
