/*
 * The candle logic of the live chart page (/kline/demo): merging history and WebSocket pushes,
 * the history queries of the first load and of a gap fill, the reconnect delay. No DOM and no
 * network here, so the unit test runs this very file without a browser; page.js wires it to the
 * page. Plain script, no build step: it defines `KlineCandles` on the global object.
 */
/* global URLSearchParams */
(function (root) {
  'use strict';

  /** Seconds per interval; 1M and 1Y are upper bounds, enough to size a history window. */
  const INTERVAL_SECONDS = { '1s': 1, '1m': 60, '15m': 900, '1h': 3600, '4h': 14400, '1d': 86400, '1w': 604800, '1M': 2678400, '1Y': 31622400 };
  const INTERVALS = Object.keys(INTERVAL_SECONDS);
  /** Candles drawn on the first load, and the most a gap fill goes back. */
  const HISTORY_BARS = 500;
  /** Per history request; the spec allows up to 5000. */
  const HISTORY_LIMIT = 1000;

  /** A chart bar of an OHLCV record or push; a candle with a missing price is an empty slot. */
  function toBar(c) {
    if (c.open === null || c.high === null || c.low === null || c.close === null) return { time: c.open_time };
    return { time: c.open_time, open: c.open, high: c.high, low: c.low, close: c.close };
  }

  /**
   * The candles of one pool and interval, by open_time (the spec's upsert key within a pool and
   * interval). History answers and live pushes may overlap: a history answer read after a push
   * of the same candle can be older than the push, so while a subscription is on, a candle that
   * was pushed is never overwritten by history.
   */
  class CandleBook {
    constructor() {
      this.byTime = new Map();
      this.pushed = new Set();
      this.sorted = null;
    }

    get size() {
      return this.byTime.size;
    }

    /** Open time of the newest candle, or undefined. */
    get lastTime() {
      const bars = this.bars();
      return bars.length ? bars[bars.length - 1].time : undefined;
    }

    /** Bars ascending by time (what the chart's setData takes). */
    bars() {
      if (!this.sorted) this.sorted = [...this.byTime.values()].sort((a, b) => a.time - b.time);
      return this.sorted;
    }

    /** A new (re)subscription: pushes from here on are newer than any history read after it. */
    beginSubscription() {
      this.pushed.clear();
    }

    /**
     * A live or snapshot push. Returns how the chart takes it: `tail` when it is the newest
     * candle or newer (the chart's update), `reset` when it lands before the newest (setData).
     */
    applyPush(c) {
      const bar = toBar(c);
      const last = this.lastTime;
      this.pushed.add(bar.time);
      this.put(bar);
      return { bar, apply: last === undefined || bar.time >= last ? 'tail' : 'reset' };
    }

    /** History records (ascending or not); returns how many candles were added or changed. */
    applyHistory(records) {
      let changed = 0;
      for (const c of records) {
        const bar = toBar(c);
        if (this.pushed.has(bar.time)) continue;
        const old = this.byTime.get(bar.time);
        if (old && sameBar(old, bar)) continue;
        this.put(bar);
        changed++;
      }
      return changed;
    }

    put(bar) {
      this.byTime.set(bar.time, bar);
      this.sorted = null;
    }
  }

  function sameBar(a, b) {
    return a.time === b.time && a.open === b.open && a.high === b.high && a.low === b.low && a.close === b.close;
  }

  /**
   * The history query after a `subscribed`: the first load takes the last HISTORY_BARS candles; a
   * gap fill after a reconnect starts at the newest candle held (it may have changed while the
   * socket was down), but goes back no further than a first load would.
   */
  function historyQuery(sel, nowMs, lastTime) {
    const to = Math.floor(nowMs / 1000);
    const windowStart = to - HISTORY_BARS * INTERVAL_SECONDS[sel.interval];
    const from = lastTime === undefined ? windowStart : Math.max(lastTime, windowStart);
    return {
      chain_type: sel.chain_type,
      chain_id: String(sel.chain_id),
      pool_address: sel.pool_address,
      interval: sel.interval,
      from: String(from),
      to: String(to),
      limit: String(HISTORY_LIMIT),
    };
  }

  /** Whether an `ohlcv` push belongs to the chart's pool and interval (addresses in any case). */
  function matchesSelection(push, sel) {
    return (
      !!push &&
      !!sel &&
      push.interval === sel.interval &&
      push.chain_type === sel.chain_type &&
      Number(push.chain_id) === Number(sel.chain_id) &&
      String(push.pool_address).toLowerCase() === String(sel.pool_address).toLowerCase()
    );
  }

  /** The spec's `subscribe` command for one pool and interval. */
  function subscribeCommand(sel, id) {
    return { id, type: 'subscribe', data: { chain_type: sel.chain_type, chain_id: Number(sel.chain_id), pool_address: sel.pool_address, token: sel.token, intervals: [sel.interval] } };
  }

  function unsubscribeCommand(sel, id) {
    return { id, type: 'unsubscribe', data: { chain_type: sel.chain_type, chain_id: Number(sel.chain_id), pool_address: sel.pool_address } };
  }

  /** Milliseconds before reconnect attempt `attempt` (0-based): 250 ms doubling to 5 s, with jitter. */
  function reconnectDelay(attempt, random) {
    const base = Math.min(5000, 250 * 2 ** Math.min(attempt, 5));
    return Math.round(base * (0.75 + 0.5 * (random ? random() : Math.random())));
  }

  /** Decimals to show for prices around `price`: at least 2, about 5 significant digits. */
  function pricePrecision(price) {
    const p = Math.abs(Number(price));
    if (!Number.isFinite(p) || p === 0) return 2;
    return Math.min(10, Math.max(2, 4 - Math.floor(Math.log10(p))));
  }

  /** Settings the page reads from its URL fragment (`#key=…&pool=…&interval=…`): a fragment never reaches a server. */
  function fragmentSettings(hash) {
    const params = new URLSearchParams(String(hash || '').replace(/^#/, ''));
    const interval = params.get('interval');
    return { key: params.get('key') || '', pool: params.get('pool') || '', interval: INTERVALS.includes(interval) ? interval : '' };
  }

  root.KlineCandles = { INTERVALS, INTERVAL_SECONDS, HISTORY_BARS, HISTORY_LIMIT, CandleBook, toBar, historyQuery, matchesSelection, subscribeCommand, unsubscribeCommand, reconnectDelay, pricePrecision, fragmentSettings };
})(globalThis);
