import type { Redis } from 'ioredis';
import { execPipeline } from '@chainpipe/redis';
import type { CryptoQuoteMessage, FiatRatesMessage, PriceQuoteMessage } from '@chainpipe/price';

/**
 * The latest quotes in Redis, shared by the price-writer (writes) and the gateway (reads):
 * `price:quote:<external_id>` and `price:fiat:<base>` hold the newest message of that asset or
 * base as JSON. A write lands only if its source timestamp is newer than the stored one, so
 * replays and out-of-order redeliveries never move a quote back in time.
 */
export const cryptoQuoteKey = (externalId: string): string => `price:quote:${externalId}`;
export const fiatRatesKey = (base: string): string => `price:fiat:${base}`;
export const latestKey = (m: PriceQuoteMessage): string => (m.kind === 'crypto' ? cryptoQuoteKey(m.external_id) : fiatRatesKey(m.base));

const WRITE_IF_NEWER = `
local current = redis.call('GET', KEYS[1])
if current then
  local ok, decoded = pcall(cjson.decode, current)
  if ok and type(decoded) == 'table' and tonumber(decoded['as_of']) and tonumber(decoded['as_of']) >= tonumber(ARGV[1]) then
    return 0
  end
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`;

type RedisWithScript = Redis & { priceWriteIfNewer(key: string, asOf: string, json: string): Promise<number> };

export class QuoteStore {
  private readonly redis: RedisWithScript;

  constructor(redis: Redis) {
    if (!(redis as unknown as Partial<RedisWithScript>).priceWriteIfNewer) redis.defineCommand('priceWriteIfNewer', { numberOfKeys: 1, lua: WRITE_IF_NEWER });
    this.redis = redis as unknown as RedisWithScript;
  }

  /** Writes each message unless a newer one is stored; says for each whether it landed. */
  async writeLatest(messages: readonly PriceQuoteMessage[]): Promise<boolean[]> {
    if (!messages.length) return [];
    const pipeline = this.redis.pipeline();
    for (const m of messages) (pipeline as unknown as RedisWithScript).priceWriteIfNewer(latestKey(m), String(m.as_of), JSON.stringify(m));
    const results = await execPipeline(pipeline);
    return results.map(([err, value]) => {
      if (err) throw err;
      return value === 1;
    });
  }

  /** The stored quotes of these assets, in the same order (undefined where none). */
  async readQuotes(externalIds: readonly string[]): Promise<(CryptoQuoteMessage | undefined)[]> {
    if (!externalIds.length) return [];
    const raw = await this.redis.mget(...externalIds.map(cryptoQuoteKey));
    return raw.map((v) => (v ? (JSON.parse(v) as CryptoQuoteMessage) : undefined));
  }

  async readFiatRates(base = 'USD'): Promise<FiatRatesMessage | undefined> {
    const v = await this.redis.get(fiatRatesKey(base));
    return v ? (JSON.parse(v) as FiatRatesMessage) : undefined;
  }
}
