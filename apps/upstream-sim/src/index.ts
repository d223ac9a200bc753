/** What tests and other tools (the demo, the benchmarks) use in-process. */
export { replayFixtures, planReplay, type ReplayOptions, type ReplayResult } from './replay/replay';
export { wrapStreamBatch, type StreamBatch, type StreamDelivery } from './replay/stream-batch';
export { DEFAULT_REPLAY_SET } from './replay/fixture-batches';
export { withDevEnv } from './replay/dev-env';
/** Its configuration section: what the configuration reference and the deploy checks read. */
export { upstreamSimConfig } from './config';
/** The fixture replayer's configuration section (its own page of the configuration reference). */
export { replayConfig } from './config';
