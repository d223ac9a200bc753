import { int, secret, str, url } from '@chainpipe/runtime';
import type { ChannelAdapter } from './adapter';
import { ChangeNowAdapter } from './changenow';
import { ThorchainAdapter } from './thorchain';

/** Provider settings shared by every app that talks to the channels (the gateway, the order tracker). */
export const channelAdaptersConfig = {
  CHANGENOW_API_URL: url({ protocols: ['http', 'https'], doc: 'ChangeNOW API base (https://api.changenow.io)' }),
  CHANGENOW_API_KEY: secret({ doc: 'sent as x-changenow-api-key' }),
  CHANGENOW_TIMEOUT_MS: int({ default: 10_000, min: 100, doc: 'one ChangeNOW call' }),
  THORNODE_API_URL: url({ protocols: ['http', 'https'], doc: 'THORNode API base (https://thornode.ninerealms.com)' }),
  THORNODE_CLIENT_ID: str({ default: '', doc: 'sent as x-client-id when set' }),
  THORNODE_TIMEOUT_MS: int({ default: 10_000, min: 100, doc: 'one THORNode call' }),
  CHANGENOW_DEPOSIT_WINDOW_MS: int({ default: 30 * 60_000, min: 60_000, doc: 'expire_at of a ChangeNOW order: how long after creation the deposit is awaited' }),
};

export function channelAdapters(config: {
  CHANGENOW_API_URL: string;
  CHANGENOW_API_KEY: string;
  CHANGENOW_TIMEOUT_MS: number;
  CHANGENOW_DEPOSIT_WINDOW_MS: number;
  THORNODE_API_URL: string;
  THORNODE_CLIENT_ID: string;
  THORNODE_TIMEOUT_MS: number;
}): ChannelAdapter[] {
  return [
    new ThorchainAdapter({ baseUrl: config.THORNODE_API_URL, clientId: config.THORNODE_CLIENT_ID, timeoutMs: config.THORNODE_TIMEOUT_MS }),
    new ChangeNowAdapter({ baseUrl: config.CHANGENOW_API_URL, apiKey: config.CHANGENOW_API_KEY, timeoutMs: config.CHANGENOW_TIMEOUT_MS, depositWindowMs: config.CHANGENOW_DEPOSIT_WINDOW_MS }),
  ];
}
