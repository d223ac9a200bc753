import { chainOriginConfig } from '@chainpipe/chains';
import { dbConfig } from '@chainpipe/db';
import { kafkaConfig } from '@chainpipe/kafka';
import { int } from '@chainpipe/runtime';

export const pendingCompensatorConfig = {
  ...kafkaConfig,
  ...dbConfig,
  ...chainOriginConfig,
  PENDING_CHECK_INTERVAL_MS: int({ default: 60_000, min: 100, doc: 'pause between two passes over the pending transactions' }),
  PENDING_MIN_AGE_MS: int({ default: 30_000, min: 0, doc: 'a pending transaction is checked once it has not changed for this long' }),
  PENDING_BATCH_SIZE: int({ default: 500, min: 1, max: 10_000, doc: 'pending transactions checked per pass (least recently checked first)' }),
  PENDING_CONCURRENCY: int({ default: 8, min: 1, max: 64, doc: 'origin look-ups in flight at once' }),
};
