import type { ChainableCommander } from 'ioredis';

/** How long a pipeline may take before its caller is told it failed. */
export const PIPELINE_TIMEOUT_MS = 5_000;

/**
 * Runs a pipeline, failing it after `timeoutMs`. A pipeline whose connection is lost while Redis
 * answers it can be left waiting for replies that never come once ioredis reconnects (its
 * commands half re-sent: redis/ioredis#800), and its promise never settles: a periodic job
 * waiting on it (the WebSocket cap's lease renewal) then never runs again, and a consumer's
 * handler never returns. Here the caller gets an error instead and tries again on its own terms;
 * every pipeline of ours is safe to run twice.
 */
export async function execPipeline(pipeline: ChainableCommander, timeoutMs = PIPELINE_TIMEOUT_MS): Promise<[Error | null, unknown][]> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis pipeline not answered in ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return (await Promise.race([pipeline.exec(), timedOut])) ?? [];
  } finally {
    clearTimeout(timer);
  }
}
