import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { base58Decode, base58Encode, canonicalAddress, decodeSegwit, normalizeAddress, type ChainFamily } from '@chainpipe/chains';
import { loadContracts } from '@chainpipe/contracts';
import { readFixtureJson } from '@chainpipe/testing';
import { MAX_ADDRESSES_PER_REQUEST, changeMessages, parseContains, parsePatch, parseWallets } from '../src/management/address-requests';

/** Every address a fixture of real chain data names, read from the node's own fields. */
function evmFixtureAddresses(): string[] {
  const block = readFixtureJson<{ miner: string; transactions: { from: string; to: string | null }[] }>('evm/eth-mainnet-13998626.block_fulltx.json');
  return [block.miner, ...block.transactions.flatMap((t) => [t.from, t.to]).filter((a): a is string => typeof a === 'string')];
}

type TronContract = { type: string; parameter: { value: Record<string, unknown> } };
function tronFixtureAddresses(file: string): string[] {
  const block = readFixtureJson<{ transactions: { raw_data: { contract: TronContract[] } }[] }>(file);
  const out: string[] = [];
  for (const tx of block.transactions) {
    for (const c of tx.raw_data.contract) {
      for (const field of ['owner_address', 'to_address', 'receiver_address', 'contract_address']) {
        const v = c.parameter.value[field];
        if (typeof v === 'string') out.push(v);
      }
    }
  }
  return out;
}

function mostCommonTriggerContract(file: string): string {
  const block = readFixtureJson<{ transactions: { raw_data: { contract: TronContract[] } }[] }>(file);
  const counts = new Map<string, number>();
  for (const tx of block.transactions) {
    for (const c of tx.raw_data.contract) {
      if (c.type !== 'TriggerSmartContract') continue;
      const a = String(c.parameter.value.contract_address);
      counts.set(a, (counts.get(a) ?? 0) + 1);
    }
  }
  return [...counts].sort((x, y) => y[1] - x[1])[0][0];
}

function bitcoinFixtureOutputs(): { address: string; type: string }[] {
  const block = readFixtureJson<{ tx: { vout: { scriptPubKey: { address?: string; type: string } }[] }[] }>('bitcoin/btc-mainnet-766390.getblock_verbosity2.json');
  return block.tx.flatMap((t) => t.vout.map((o) => o.scriptPubKey)).filter((s): s is { address: string; type: string } => typeof s.address === 'string');
}

function solanaFixtureAccounts(): string[] {
  const block = readFixtureJson<{ result: { transactions: { transaction: { message: { accountKeys: string[] } } }[] } }>('solana/sol-devnet-blockheight139015678.getBlock_json_full.json');
  return [...new Set(block.result.transactions.flatMap((t) => t.transaction.message.accountKeys))];
}

function expectValid(family: ChainFamily, raw: string): string {
  const check = canonicalAddress(family, raw);
  if (!check.ok) throw new Error(`${family} ${raw} rejected: ${check.reason}`);
  // The stored form must be the parsers' form, or the address would never match.
  expect(check.address, raw).to.equal(normalizeAddress(family, raw));
  return check.address;
}

function expectInvalid(family: ChainFamily, raw: string): string {
  const check = canonicalAddress(family, raw);
  if (check.ok) throw new Error(`${family} ${JSON.stringify(raw)} accepted as ${check.address}`);
  return check.reason;
}

describe('address checks per chain family', () => {
  describe('evm', () => {
    it('accepts every address of a real Ethereum block and stores it lowercase', () => {
      const addresses = evmFixtureAddresses();
      expect(addresses.length).to.be.greaterThan(7);
      for (const a of addresses) expect(expectValid('evm', a.toUpperCase().replace(/^0X/, '0x'))).to.equal(a.toLowerCase());
    });

    it('refuses what is not 0x + 40 hex digits', () => {
      const real = evmFixtureAddresses()[0];
      for (const bad of [real.slice(2), real.slice(0, -1), real + '0', real.replace(/.$/, 'g'), '0x', 'hello', `${real} x`]) {
        expect(expectInvalid('evm', bad)).to.match(/0x followed by 40 hex digits/);
      }
    });
  });

  describe('tron', () => {
    const visibleFile = 'tron/tron-mainnet-60836289.wallet_getblockbynum_full_visible.json';
    const hexFile = 'tron/tron-mainnet-61132092.wallet_getblockbynum_full_hex.json';

    it('accepts every Base58 address of a real block (visible=true) as it is', () => {
      const addresses = tronFixtureAddresses(visibleFile);
      expect(addresses.length).to.be.greaterThan(100);
      for (const a of addresses) expect(expectValid('tvm', a)).to.equal(a);
    });

    it('turns every 41-hex address of a real block (visible=false) into Base58, also with 0x forms', () => {
      const addresses = tronFixtureAddresses(hexFile);
      expect(addresses.length).to.be.greaterThan(200);
      for (const hex of addresses) {
        const base58 = expectValid('tvm', hex);
        expect(base58).to.match(/^T/);
        expect(canonicalAddress('tvm', `0x${hex.slice(2)}`)).to.deep.equal({ ok: true, address: base58 });
        expect(canonicalAddress('tvm', `0x${hex}`)).to.deep.equal({ ok: true, address: base58 });
        expect(canonicalAddress('tvm', hex.toUpperCase())).to.deep.equal({ ok: true, address: base58 });
      }
    });

    it('stores the USDT contract in one form whichever of the three fixture forms names it', () => {
      // The busiest TRC-20 contract of both blocks is USDT: Base58 in one, 41-hex in the other,
      // and the eth-compatible JSON-RPC receipt's Transfer log names it as 0x + 20 bytes.
      const fromVisible = mostCommonTriggerContract(visibleFile);
      const fromHex = mostCommonTriggerContract(hexFile);
      const receipt = readFixtureJson<{ result: { logs: { address: string; topics: string[] }[] } }>(
        'tron/tron-mainnet-39507235.jsonrpc_eth_getTransactionReceipt_usdt_0x9ff75c01-docs-example.json',
      );
      const fromJsonRpc = receipt.result.logs[0].address;
      expect(fromVisible).to.match(/^T/);
      expect(fromHex).to.match(/^41/);
      expect(fromJsonRpc).to.match(/^0x[0-9a-f]{40}$/);
      expect(expectValid('tvm', fromHex)).to.equal(fromVisible);
      expect(expectValid('tvm', fromJsonRpc)).to.equal(fromVisible);
    });

    it('refuses a Base58 address with a broken checksum, a wrong prefix or length, and odd hex', () => {
      const real = tronFixtureAddresses(visibleFile)[0];
      // Change one character to another of the alphabet: same shape, checksum fails.
      const last = real[real.length - 1];
      const flipped = real.slice(0, -1) + (last === 'a' ? 'b' : 'a');
      expect(expectInvalid('tvm', flipped)).to.match(/checksum/);
      expect(expectInvalid('tvm', real.slice(0, -1))).to.match(/Base58Check/);
      expect(expectInvalid('tvm', real.replace(/^T/, 'X'))).to.match(/starting with T/);
      expect(expectInvalid('tvm', 'T' + '0'.repeat(33))).to.match(/Base58Check/);
      const hex = tronFixtureAddresses(hexFile)[0];
      expect(expectInvalid('tvm', '42' + hex.slice(2))).to.match(/hex digits/);
      expect(expectInvalid('tvm', hex.slice(0, -1))).to.match(/hex digits/);
      expect(expectInvalid('tvm', hex.replace(/.$/, 'z'))).to.match(/hex digits/);
    });
  });

  describe('bitcoin', () => {
    it('accepts every output address of a real mainnet block (P2PKH, P2SH, P2WPKH, P2WSH, P2TR)', () => {
      const outputs = bitcoinFixtureOutputs();
      const types = new Set(outputs.map((o) => o.type));
      for (const t of ['pubkeyhash', 'scripthash', 'witness_v0_keyhash', 'witness_v0_scripthash', 'witness_v1_taproot']) expect(types, t).to.include(t);
      for (const o of outputs) expect(expectValid('utxo', o.address)).to.equal(o.address);
    });

    it('decodes segwit programs of the length their script type says', () => {
      for (const o of bitcoinFixtureOutputs()) {
        if (!o.address.startsWith('bc1')) continue;
        const decoded = decodeSegwit('bc', o.address)!;
        const expected = { witness_v0_keyhash: [0, 20], witness_v0_scripthash: [0, 32], witness_v1_taproot: [1, 32] }[o.type];
        expect([decoded.version, decoded.program.length], o.address).to.deep.equal(expected);
      }
    });

    it('accepts an all-uppercase bech32 address and stores it lowercase; refuses mixed case', () => {
      const segwit = bitcoinFixtureOutputs().find((o) => o.type === 'witness_v0_keyhash')!.address;
      expect(expectValid('utxo', segwit.toUpperCase())).to.equal(segwit);
      expect(expectInvalid('utxo', segwit.slice(0, 6).toUpperCase() + segwit.slice(6))).to.match(/bech32/);
    });

    it('refuses bad checksums, bad characters, testnet and wrong versions', () => {
      const outputs = bitcoinFixtureOutputs();
      const p2pkh = outputs.find((o) => o.type === 'pubkeyhash')!.address;
      const p2tr = outputs.find((o) => o.type === 'witness_v1_taproot')!.address;
      const p2wpkh = outputs.find((o) => o.type === 'witness_v0_keyhash')!.address;
      const swap = (s: string, i: number, alphabet: string) => s.slice(0, i) + alphabet[(alphabet.indexOf(s[i]) + 1) % alphabet.length] + s.slice(i + 1);
      expect(expectInvalid('utxo', swap(p2pkh, 10, '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'))).to.match(/checksum/);
      expect(expectInvalid('utxo', swap(p2tr, 20, 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'))).to.match(/bech32/);
      expect(expectInvalid('utxo', p2pkh.replace(/.$/, '0'))).to.match(/mainnet address|Base58/);
      expect(expectInvalid('utxo', p2wpkh.replace(/^bc1/, 'tb1'))).to.match(/mainnet/);
      // A version-0 program written with the bech32m checksum (BIP-350 forbids it).
      expect(expectInvalid('utxo', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh')).to.match(/bech32/);
      // Base58Check with a valid checksum but the Tron version byte.
      const tronPayload = Buffer.concat([Buffer.from([0x41]), Buffer.alloc(20, 7)]);
      const sum = createHash('sha256').update(createHash('sha256').update(tronPayload).digest()).digest().subarray(0, 4);
      expect(expectInvalid('utxo', base58Encode(Buffer.concat([tronPayload, sum])))).to.match(/starting with 1, 3 or bc1/);
    });
  });

  describe('solana', () => {
    it('accepts every account key of a real block as given', () => {
      const keys = solanaFixtureAccounts();
      expect(keys.length).to.be.greaterThan(20);
      for (const k of keys) expect(expectValid('svm', k)).to.equal(k);
    });

    it('refuses characters outside Base58, wrong lengths and keys that are not 32 bytes', () => {
      const key = solanaFixtureAccounts().find((k) => !k.startsWith('1'))!;
      expect(expectInvalid('svm', key.replace(/.$/, '0'))).to.match(/Base58/);
      expect(expectInvalid('svm', key.replace(/.$/, 'l'))).to.match(/Base58/);
      expect(expectInvalid('svm', key.slice(0, 20))).to.match(/32 to 44/);
      const thirtyOneBytes = base58Encode(base58Decode(key)!.subarray(1));
      expect(thirtyOneBytes.length).to.be.within(32, 44);
      expect(expectInvalid('svm', thirtyOneBytes)).to.match(/32-byte/);
    });
  });

  it('refuses empty and overlong input in every family', () => {
    for (const family of ['evm', 'tvm', 'svm', 'utxo'] as const) {
      expect(expectInvalid(family, '   ')).to.equal('is empty');
      expect(expectInvalid(family, 'a'.repeat(129))).to.match(/longer than 128/);
    }
  });
});

describe('monitored-address requests', () => {
  const evm = evmFixtureAddresses();
  const tronBase58 = tronFixtureAddresses('tron/tron-mainnet-60836289.wallet_getblockbynum_full_visible.json')[0];

  it('merges wallet groups of one chain type (case-insensitive), folds duplicates and keeps the first order', () => {
    const parsed = parseWallets(
      {
        wallets: [
          { chain_type: 'Ethereum', address: [evm[0], evm[1].toUpperCase().replace(/^0X/, '0x')] },
          { chain_type: 'tron', address: [tronBase58] },
          { chain_type: 'ETHEREUM', address: [evm[1], evm[2]] },
        ],
      },
      'add',
    );
    expect(parsed).to.deep.equal({
      ok: true,
      value: [
        { chainType: 'ethereum', adds: [evm[0], evm[1], evm[2]].map((a) => a.toLowerCase()), removes: [] },
        { chainType: 'tron', adds: [tronBase58], removes: [] },
      ],
    });
    const removal = parseWallets({ wallets: [{ chain_type: 'tron', address: [tronBase58] }] }, 'remove');
    expect(removal).to.deep.equal({ ok: true, value: [{ chainType: 'tron', adds: [], removes: [tronBase58] }] });
  });

  it('names the bad address, its position and its chain', () => {
    const parsed = parseWallets({ wallets: [{ chain_type: 'bsc', address: [evm[0]] }, { chain_type: 'bsc', address: [evm[1], 'T123'] }] }, 'add');
    expect(parsed).to.deep.equal({ ok: false, error: 'wallets[1].address[1] "T123" is not a valid bsc address: it must be 0x followed by 40 hex digits' });
  });

  it('refuses unknown chain types', () => {
    expect(parseWallets({ wallets: [{ chain_type: 'dogecoin', address: ['x'] }] }, 'add')).to.deep.equal({ ok: false, error: 'wallets[0].chain_type "dogecoin" is not a supported chain type' });
    expect(parsePatch({ chain_type: 'eth', adds: [evm[0]] })).to.deep.equal({ ok: false, error: 'chain_type "eth" is not a supported chain type' });
  });

  it(`refuses more than ${MAX_ADDRESSES_PER_REQUEST} addresses over all groups`, () => {
    const half = Array.from({ length: 501 }, (_, i) => `0x${i.toString(16).padStart(40, '0')}`);
    const parsed = parseWallets({ wallets: [{ chain_type: 'ethereum', address: half }, { chain_type: 'base', address: half }] }, 'add');
    expect(parsed).to.deep.equal({ ok: false, error: 'at most 1000 addresses per request, got 1002' });
    expect(parsePatch({ chain_type: 'ethereum', adds: half, removes: half.map((a) => a.replace('0x0', '0x1')) })).to.deep.equal({ ok: false, error: 'at most 1000 addresses per request, got 1002' });
  });

  it('patch: canonical adds and removes, and refuses an address in both lists even in different forms', () => {
    const hex = tronFixtureAddresses('tron/tron-mainnet-61132092.wallet_getblockbynum_full_hex.json')[0];
    const hexAsBase58 = (canonicalAddress('tvm', hex) as { address: string }).address;
    expect(parsePatch({ chain_type: 'TRON', adds: [hex, hexAsBase58], removes: [tronBase58] })).to.deep.equal({
      ok: true,
      value: { chainType: 'tron', adds: [hexAsBase58], removes: [tronBase58] },
    });
    expect(parsePatch({ chain_type: 'tron', adds: [hex], removes: [hexAsBase58] })).to.deep.equal({ ok: false, error: `address ${hexAsBase58} is in both adds and removes` });
    expect(parsePatch({ chain_type: 'tron' })).to.deep.equal({ ok: true, value: { chainType: 'tron', adds: [], removes: [] } });
  });

  it('contains: canonical form, or a 400 text', () => {
    expect(parseContains({ chain_type: 'Polygon', address: evm[0].toUpperCase().replace(/^0X/, '0x') })).to.deep.equal({ ok: true, value: { chainType: 'polygon', address: evm[0].toLowerCase() } });
    expect(parseContains({ chain_type: 'solana', address: '0OIl' })).to.deep.equal({ ok: false, error: 'address "0OIl" is not a valid solana address: it must be 32 to 44 Base58 characters' });
  });

  it('change messages: one per chain type that changes something, each valid against addresses.changes.v1', () => {
    const contracts = loadContracts();
    const messages = changeMessages(
      'app-1',
      [
        { chainType: 'ethereum', adds: [evm[0].toLowerCase()], removes: [] },
        { chainType: 'tron', adds: [], removes: [] },
        { chainType: 'solana', adds: [], removes: [solanaFixtureAccounts()[0]] },
      ],
      1_700_000_000_123,
    );
    expect(messages).to.deep.equal([
      { app_id: 'app-1', chain_type: 'ethereum', adds: [evm[0].toLowerCase()], removes: [], changed_at: 1_700_000_000_123 },
      { app_id: 'app-1', chain_type: 'solana', adds: [], removes: [solanaFixtureAccounts()[0]], changed_at: 1_700_000_000_123 },
    ]);
    for (const m of messages) expect(contracts.validate('kafka/addresses.changes.v1', m)).to.deep.equal({ ok: true });
  });

  it('request schemas refuse wrong shapes with the field named', () => {
    const contracts = loadContracts();
    const v = (id: string, body: unknown) => contracts.validate(id, body);
    expect(v('http/tx/addresses-wallets', { wallets: [] })).to.deep.equal({ ok: false, errors: 'wallets must NOT have fewer than 1 items' });
    expect(v('http/tx/addresses-wallets', { wallets: [{ chain_type: 'ethereum', address: [] }] })).to.deep.equal({ ok: false, errors: 'wallets.0.address must NOT have fewer than 1 items' });
    expect(v('http/tx/addresses-wallets', { wallets: [{ chain_type: 'ethereum', address: evm[0] }] })).to.deep.equal({ ok: false, errors: 'wallets.0.address must be array' });
    expect(v('http/tx/addresses-wallets', {})).to.deep.equal({ ok: false, errors: 'wallets is required' });
    expect(v('http/tx/addresses-patch', { adds: [] })).to.deep.equal({ ok: false, errors: 'chain_type is required' });
    expect(v('http/tx/addresses-contains', { chain_type: 'tron', address: ['x'] })).to.deep.equal({ ok: false, errors: 'address must be string' });
    const body: { chain_type: string; adds?: string[] } = { chain_type: 'tron' };
    expect(v('http/tx/addresses-patch', body)).to.deep.equal({ ok: true });
    expect(body).to.deep.equal({ chain_type: 'tron', adds: [], removes: [] });
  });
});
