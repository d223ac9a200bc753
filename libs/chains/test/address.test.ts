import { expect } from 'chai';
import { base58Decode, base58Encode, networkByChain, networkByName, normalizeAddress, parseChainType, tronBase58ToEvmHex, tronBase58ToHex, tronHexToBase58, isTronBase58 } from '@chainpipe/chains';

describe('Tron addresses', () => {
  // USDT on Tron: the contract of the USDT transfers in the Tron fixtures (hex 41a614f8…).
  const USDT_B58 = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
  const USDT_HEX = '41a614f803b6fd780986a42c78ec9c7f77e6ded13c';

  it('converts both ways and from the 0x form', () => {
    expect(tronHexToBase58(USDT_HEX)).to.equal(USDT_B58);
    expect(tronHexToBase58('0x' + USDT_HEX.slice(2))).to.equal(USDT_B58);
    expect(tronBase58ToHex(USDT_B58)).to.equal(USDT_HEX);
    expect(tronBase58ToEvmHex(USDT_B58)).to.equal('0x' + USDT_HEX.slice(2));
  });

  it('refuses bad checksums, lengths and characters', () => {
    const broken = USDT_B58.slice(0, -1) + (USDT_B58.endsWith('t') ? 'u' : 't');
    expect(tronBase58ToHex(broken)).to.equal(undefined);
    expect(isTronBase58(broken)).to.equal(false);
    expect(isTronBase58(USDT_B58)).to.equal(true);
    expect(tronHexToBase58('41zz')).to.equal(undefined);
    expect(tronHexToBase58('42' + USDT_HEX.slice(2))).to.equal(undefined);
    expect(base58Decode('0OIl')).to.equal(undefined);
  });

  it('base58 keeps leading zero bytes', () => {
    const bytes = Buffer.from([0, 0, 1, 2, 3]);
    expect(base58Encode(bytes).startsWith('11')).to.equal(true);
    expect(base58Decode(base58Encode(bytes))).to.deep.equal(bytes);
  });
});

describe('networks and normalization', () => {
  it('knows the spec networks and chain ids', () => {
    expect(networkByName('ETHEREUM-MAINNET ')?.chainId).to.equal(1);
    expect(networkByName('solana-mainnet')).to.include({ chainType: 'solana', chainId: 1, family: 'svm' });
    expect(networkByName('base-mainnet')?.chainId).to.equal(8453);
    expect(networkByName('dogecoin-mainnet')).to.equal(undefined);
    expect(networkByChain('BSC', 56)?.network).to.equal('bsc-mainnet');
    expect(parseChainType('Tron')).to.equal('tron');
    expect(parseChainType('toString')).to.equal(undefined);
  });

  it('stores one form per family', () => {
    expect(normalizeAddress('evm', ' 0xAbC ')).to.equal('0xabc');
    expect(normalizeAddress('tvm', '41a614f803b6fd780986a42c78ec9c7f77e6ded13c')).to.equal('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
    expect(normalizeAddress('utxo', 'BC1QXY')).to.equal('bc1qxy');
    expect(normalizeAddress('utxo', '1BoatSLRHtKNngkdXEeobR76b53LETtpyT')).to.equal('1BoatSLRHtKNngkdXEeobR76b53LETtpyT');
  });
});
