/** What tests and other tools (the demo, the benchmarks) use in-process. */
export { replayFixtures, planReplay, type ReplayOptions, type ReplayResult } from './replay/replay';
export { wrapStreamBatch, type StreamBatch, type StreamDelivery } from './replay/stream-batch';
export { DEFAULT_REPLAY_SET } from './replay/fixture-batches';
export { withDevEnv } from './replay/dev-env';
