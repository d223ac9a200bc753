import type { IncomingMessage } from 'node:http';
import { expect } from 'chai';
import { handshakeKey, selectSubprotocol } from '../src/kline/ws-upgrade';

describe('candlestick WebSocket handshake: the key of a browser', () => {
  const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

  it('takes X-API-Key first, else the x-api-key.<key> subprotocol', () => {
    expect(handshakeKey(req({ 'x-api-key': 'cpk_h' }))).to.equal('cpk_h');
    expect(handshakeKey(req({ 'sec-websocket-protocol': 'kline.v1, x-api-key.cpk_p' }))).to.equal('cpk_p');
    expect(handshakeKey(req({ 'x-api-key': 'cpk_h', 'sec-websocket-protocol': 'x-api-key.cpk_p' }))).to.equal('cpk_h');
    expect(handshakeKey(req({ 'sec-websocket-protocol': 'kline.v1, x-api-key.' }))).to.equal(undefined);
    expect(handshakeKey(req({}))).to.equal(undefined);
  });

  it('selects kline.v1, else the first protocol without a key; never echoes the key', () => {
    expect(selectSubprotocol(new Set(['x-api-key.cpk_p', 'kline.v1']))).to.equal('kline.v1');
    expect(selectSubprotocol(new Set(['x-api-key.cpk_p', 'other']))).to.equal('other');
    expect(selectSubprotocol(new Set(['x-api-key.cpk_p']))).to.equal(false);
  });
});
