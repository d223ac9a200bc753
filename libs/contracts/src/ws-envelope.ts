/**
 * `{ id, time, type, code, data, msg }`: every frame of the gateways' WebSockets, both ways. A
 * contract type (the protocols of libs/kline and tx-gateway build it; libs/http's connection kit
 * sends it), so it lives with the contracts where a pure domain lib may import it.
 */
export interface WsEnvelope {
  id: string;
  time: number;
  type: string;
  code: number;
  data: unknown;
  msg: string;
}
