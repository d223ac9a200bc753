import type { KlineCandlesMessage } from '@chainpipe/contracts';
import { candlesMessage, type CandleValues } from './candle-messages';
import { INTERVALS, INTERVAL_INDEX } from './intervals';

/** Digits of an open time in a snapshot's times: those of any safe integer (open times are Unix seconds, ≥ 0). */
export const SNAPSHOT_TIME_WIDTH = 16;

const ABSENT = '0'.repeat(SNAPSHOT_TIME_WIDTH);

/** What the latest-candles store keeps of a kline.candles.v2 record. */
export interface CandleSnapshot {
  /**
   * Its candles' open times, a slot of SNAPSHOT_TIME_WIDTH digits an interval in INTERVALS'
   * order: the open time plus one, zeros where it has no candle (less than any it could have).
   * Two snapshots' times compare slot by slot as text, with no number parsed.
   */
  times: string;
  /** A kline.candles.v2 record's JSON holding those candles and no other. */
  json: string;
}

/**
 * A record's latest candle of each interval (of two with one open time, the later in the
 * record) and their open times. The record's own JSON when it holds no other candle, as the
 * aggregator's records usually do (a call's ticks of a pool changed one candle an interval);
 * else a record of those candles alone (a call catching up on a backlog changes many candles of
 * an interval, and the store must not keep them all). `slotTexts` keeps the slots' text by open
 * time for the next records: a call's records share a few open times (each pool's candles of the
 * same second, minute, …).
 */
export function candleSnapshot(record: { value: KlineCandlesMessage; json: string }, slotTexts: Map<number, string> = new Map()): CandleSnapshot {
  const { candles } = record.value;
  const latest: (CandleValues | undefined)[] = new Array(INTERVALS.length).fill(undefined);
  let kept = 0;
  for (const c of candles) {
    const slot = INTERVAL_INDEX.get(c.interval);
    if (slot === undefined) throw new Error(`a candle of an unknown interval: ${String(c.interval)}`);
    const current = latest[slot];
    if (current === undefined) kept++;
    if (current === undefined || c.open_time >= current.open_time) latest[slot] = c;
  }
  let times = '';
  for (const c of latest) {
    if (c === undefined) {
      times += ABSENT;
      continue;
    }
    let text = slotTexts.get(c.open_time);
    if (text === undefined) slotTexts.set(c.open_time, (text = String(c.open_time + 1).padStart(SNAPSHOT_TIME_WIDTH, '0')));
    times += text;
  }
  const json = kept === candles.length ? record.json : JSON.stringify(candlesMessage(record.value, latest.filter((c): c is CandleValues => c !== undefined)));
  return { times, json };
}
