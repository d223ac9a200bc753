/*
 * The live chart page: lists the active pools, draws the candles of one pool and interval from
 * the history endpoint, then follows the candlestick WebSocket as the spec tells clients to
 * (subscribe, snapshot, live pushes upserted by open_time; after a reconnect re-subscribe and fill
 * the gap from history). The candle logic is in candles.js.
 *
 * The API key comes from the URL fragment (`#key=…`, never sent to the server) or the key field,
 * and lives only in this page's memory. REST calls send it as `X-API-Key`; a browser cannot set
 * headers on a WebSocket, so the socket offers it as the subprotocol `x-api-key.<key>` beside
 * `kline.v1`, which the server selects (it never echoes the key).
 *
 * State for tests and curious users: data-* attributes of #chart, and `window.klineDemo`.
 */
/* global document, window, location, fetch, URLSearchParams, WebSocket, setTimeout, clearTimeout, LightweightCharts, KlineCandles */
(function () {
  'use strict';
  const K = KlineCandles;
  // The page is served at <root>kline/demo: the API sits beside it, also behind a path prefix.
  const root = location.pathname.replace(/kline\/demo\/?$/, '');
  const wsBase = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + root;

  const $ = (id) => document.getElementById(id);
  const el = { form: $('settings'), key: $('key'), pool: $('pool'), interval: $('interval'), status: $('status'), chart: $('chart') };
  const initial = K.fragmentSettings(location.hash);

  const state = { key: initial.key, sel: null, ws: null, attempt: 0, retry: null, seq: 0, subId: '', generation: 0, subscriptions: 0, gapFills: 0, gapAdded: 0, pushes: 0 };
  let book = new K.CandleBook();

  const chart = LightweightCharts.createChart(el.chart, {
    autoSize: true,
    layout: { background: { color: '#ffffff' }, textColor: '#333333' },
    grid: { vertLines: { color: '#f0f0f0' }, horzLines: { color: '#f0f0f0' } },
    timeScale: { timeVisible: true, secondsVisible: false, maxBarSpacing: 40, rightOffset: 3 },
  });
  const series = chart.addSeries(LightweightCharts.CandlestickSeries, { upColor: '#26a69a', downColor: '#ef5350', borderVisible: false, wickUpColor: '#26a69a', wickDownColor: '#ef5350' });

  function status(text, isError) {
    el.status.textContent = text;
    el.status.className = isError ? 'error' : '';
  }

  function publish() {
    const d = el.chart.dataset;
    const bars = book.bars();
    const last = bars[bars.length - 1];
    d.bars = String(bars.length);
    d.lastTime = last ? String(last.time) : '';
    d.lastClose = last && last.close !== undefined ? String(last.close) : '';
    d.subscriptions = String(state.subscriptions);
    d.gapFills = String(state.gapFills);
    d.gapAdded = String(state.gapAdded);
    d.pushes = String(state.pushes);
  }

  function setSocketState(s) {
    el.chart.dataset.ws = s;
  }

  function redraw() {
    const bars = book.bars();
    series.setData(bars);
    const last = bars[bars.length - 1];
    if (last && last.close !== undefined) {
      const precision = K.pricePrecision(last.close);
      series.applyOptions({ priceFormat: { type: 'price', precision, minMove: 10 ** -precision } });
    }
    publish();
  }

  async function api(path, query) {
    const url = root + path.replace(/^\//, '') + (query ? '?' + new URLSearchParams(query) : '');
    const res = await fetch(url, { headers: { 'X-API-Key': state.key } });
    const body = await res.json().catch(() => null);
    if (!res.ok || !body || body.code !== 0) throw new Error((body && body.message) || 'HTTP ' + res.status);
    return body.data;
  }

  async function loadPools() {
    const pools = [];
    for (let page = 1, pages = 1; page <= pages && page <= 50; page++) {
      const data = await api('/api/v1/admin/pools', { page: String(page), page_size: '100' });
      pools.push(...data.items.filter((p) => p.is_active));
      pages = data.pagination.totalPages;
    }
    el.pool.replaceChildren();
    for (const p of pools) {
      const option = document.createElement('option');
      option.value = String(p.id);
      // textContent: labels are user data, never markup.
      option.textContent = `${p.label || p.dex_id || 'pool ' + p.id} · ${p.chain_type}:${p.chain_id} · ${p.pool_address.slice(0, 12)}… (${p.token})`;
      option.poolRecord = p;
      el.pool.append(option);
    }
    if (initial.pool && pools.some((p) => String(p.id) === initial.pool)) el.pool.value = initial.pool;
    return pools.length;
  }

  /** Starts showing the selected pool and interval: a fresh book, then (re)subscribe. */
  function select() {
    const option = el.pool.selectedOptions[0];
    if (!option) return;
    const p = option.poolRecord;
    const next = { chain_type: p.chain_type, chain_id: p.chain_id, pool_address: p.pool_address, token: p.token, interval: el.interval.value };
    if (state.sel && state.ws && state.ws.readyState === WebSocket.OPEN) state.ws.send(JSON.stringify(K.unsubscribeCommand(state.sel, 'u' + ++state.seq)));
    state.sel = next;
    state.generation++;
    book = new K.CandleBook();
    chart.applyOptions({ timeScale: { secondsVisible: next.interval === '1s' } });
    redraw();
    if (state.ws && state.ws.readyState === WebSocket.OPEN) subscribe();
    else connect();
  }

  function subscribe() {
    state.subId = 's' + ++state.seq;
    book.beginSubscription();
    state.ws.send(JSON.stringify(K.subscribeCommand(state.sel, state.subId)));
  }

  /** After `subscribed`: the first load, or after a reconnect the gap since the newest candle held. */
  async function fillHistory() {
    const generation = state.generation;
    const gap = book.size > 0;
    const records = await api('/kline/api/v1/kline/ohlcv', K.historyQuery(state.sel, Date.now(), book.lastTime));
    if (generation !== state.generation) return;
    const added = book.applyHistory(records);
    if (gap) {
      state.gapFills++;
      state.gapAdded = added;
    }
    redraw();
    follow();
  }

  /**
   * While the candles fit the width, show them all (a new pool's few candles would otherwise sit
   * at the right edge); past that, the chart keeps the user's zoom and scrolls with new candles.
   */
  const FIT_BARS = 150;
  function follow() {
    if (book.size <= FIT_BARS) chart.timeScale().fitContent();
  }

  function onMessage(ev) {
    let m;
    try {
      m = JSON.parse(ev.data);
    } catch {
      return;
    }
    if (m.type === 'subscribed' && m.id === state.subId) {
      state.attempt = 0;
      state.subscriptions++;
      setSocketState('subscribed');
      status('live: ' + m.data.key + ' ' + state.sel.interval);
      fillHistory().catch((err) => status('history failed: ' + err.message, true));
    } else if (m.type === 'ohlcv' && K.matchesSelection(m.data, state.sel)) {
      state.pushes++;
      const r = book.applyPush(m.data);
      const grew = book.size !== Number(el.chart.dataset.bars);
      if (r.apply === 'tail') series.update(r.bar);
      else series.setData(book.bars());
      publish();
      if (grew) follow();
    } else if (m.type === 'error') {
      status('server: ' + m.msg, true);
    }
  }

  function connect() {
    if (!state.key || !state.sel) return;
    clearTimeout(state.retry);
    if (state.ws) {
      state.ws.onclose = null;
      state.ws.close();
    }
    setSocketState('connecting');
    const ws = new WebSocket(wsBase + 'kline/api/v1/kline/ws', ['kline.v1', 'x-api-key.' + state.key]);
    state.ws = ws;
    ws.onopen = () => {
      setSocketState('open');
      subscribe();
    };
    ws.onmessage = onMessage;
    ws.onclose = () => {
      if (state.ws !== ws) return;
      setSocketState('closed');
      const delay = K.reconnectDelay(state.attempt++);
      status('disconnected; reconnecting in ' + (delay / 1000).toFixed(1) + ' s', true);
      state.retry = setTimeout(connect, delay);
    };
  }

  async function start() {
    const key = el.key.value.trim() || state.key;
    if (key !== state.key && state.ws) {
      // A socket opened with another key: close it; select() opens one with this key.
      state.ws.onclose = null;
      state.ws.close();
      state.ws = null;
      clearTimeout(state.retry);
    }
    state.key = key;
    el.key.value = state.key;
    if (!state.key) return status('enter an API key (or open the page as /kline/demo#key=…)', true);
    status('loading pools…');
    try {
      const n = await loadPools();
      if (!n) return status('no active pool: register and activate one (docs/decisions.md, Candlestick service)', true);
    } catch (err) {
      return status('pools: ' + err.message, true);
    }
    select();
  }

  for (const i of K.INTERVALS) {
    const option = document.createElement('option');
    option.value = option.textContent = i;
    el.interval.append(option);
  }
  el.interval.value = initial.interval || '1m';
  el.key.value = initial.key;
  el.form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    start();
  });
  el.pool.addEventListener('change', select);
  el.interval.addEventListener('change', select);
  publish();
  window.klineDemo = { bars: () => book.bars().slice(), reconnect: () => state.ws && state.ws.close() };
  if (state.key) start();
})();
