import { RandomWalk, type WalkDrivers } from './random-walk';

/**
 * A fiat-rates source speaking Open Exchange Rates' `GET /api/latest.json?app_id=…&base=USD&symbols=…`
 * (https://docs.openexchangerates.org/reference/latest-json): `{disclaimer, license, timestamp
 * (Unix seconds), base, rates: {CODE: units per 1 base}}`. Starting rates are round figures of
 * the real ones; they then walk slowly.
 */
const USD_RATES: Record<string, number> = {
  USD: 1, EUR: 0.92, JPY: 150, GBP: 0.79, CNY: 7.2, KRW: 1380, INR: 84, CAD: 1.37, AUD: 1.52, CHF: 0.88,
  HKD: 7.8, SGD: 1.34, TWD: 32, BRL: 5.6, RUB: 92, TRY: 34, MXN: 18, ZAR: 18.3, SEK: 10.6, NOK: 10.8,
  DKK: 6.9, PLN: 4, CZK: 23, HUF: 365, THB: 35, IDR: 15800, VND: 25000, PHP: 57, MYR: 4.6, NZD: 1.65,
  AED: 3.6725, SAR: 3.75, ILS: 3.7, UAH: 41, ARS: 950, NGN: 1500, KWD: 0.307, BHD: 0.376,
};

export class FiatRatesSource {
  private readonly walks = new Map<string, RandomWalk>();

  constructor(private readonly drivers: WalkDrivers) {
    for (const [code, rate] of Object.entries(USD_RATES)) {
      // USD is the base: it never moves against itself.
      this.walks.set(code, new RandomWalk(rate, { volatility: code === 'USD' ? 0 : 0.0005, stepMs: 1000, ...drivers }));
    }
  }

  has(code: string): boolean {
    return this.walks.has(code);
  }

  /** Pins the rate of a code against USD. */
  pin(code: string, rate: number): void {
    let w = this.walks.get(code);
    if (!w) {
      w = new RandomWalk(rate, { volatility: 0.0005, stepMs: 1000, ...this.drivers });
      this.walks.set(code, w);
    }
    w.pin(rate);
  }

  /** The answer for `base` (default USD) and optional `symbols`; undefined for an unknown base. */
  answer(base: string, symbols: string[] | undefined): Record<string, unknown> | undefined {
    const baseWalk = this.walks.get(base);
    if (!baseWalk) return undefined;
    const baseRate = baseWalk.read().value;
    const rates: Record<string, number> = {};
    let newest = 0;
    for (const [code, w] of this.walks) {
      if (symbols && !symbols.includes(code)) continue;
      const { value, at } = w.read();
      newest = Math.max(newest, at);
      rates[code] = Number((value / baseRate).toPrecision(10));
    }
    return {
      disclaimer: 'Usage subject to terms: https://openexchangerates.org/terms',
      license: 'https://openexchangerates.org/license',
      timestamp: Math.floor((newest || this.drivers.clock.now()) / 1000),
      base,
      rates,
    };
  }
}
