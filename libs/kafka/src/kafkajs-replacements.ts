import { Gauge, type Registry } from 'prom-client';
import type { Component, HealthReport, Logger } from '@chainpipe/runtime';
import { useNativeCrc32c } from './crc32c';
import { linearGroupingInstalled } from './linear-grouping';
import { useExactProduceRequests } from './produce-request';
import { useExactRecords } from './record-encoder';

/**
 * The modules of kafkajs this package replaces through the require cache (kafkajs-modules.ts),
 * each a drop-in with kafkajs' own contract: the per-partition grouping of a request's messages
 * (linear-grouping.ts, only before kafkajs loads), the record batch checksum (crc32c.ts), records
 * and batches at their exact size (record-encoder.ts), produce requests (produce-request.ts).
 * Each can fail to take: kafkajs loaded its own first (a module that imported kafkajs before this
 * package, a produce before `createKafka`), or an upgrade moved or changed the module. The
 * process then runs kafkajs' own code: the same bytes, only slower. The unit tests hold each
 * replacement to kafkajs' own; at run time what took is logged, counted in
 * `chainpipe_kafkajs_replacement_in_use` and reported by readiness (`kafkajsReplacementsComponent`).
 */
export const KAFKAJS_REPLACEMENTS = ['linear-grouping', 'native-crc32c', 'exact-records', 'exact-produce-requests'] as const;
export type KafkajsReplacement = (typeof KAFKAJS_REPLACEMENTS)[number];
/** Per replacement: true when kafkajs runs it. */
export type KafkajsReplacementStatus = Record<KafkajsReplacement, boolean>;

/** How each replacement is installed; each call is idempotent and says whether kafkajs runs it. */
export const KAFKAJS_REPLACEMENT_INSTALLERS: Readonly<Record<KafkajsReplacement, () => boolean>> = {
  // installed as this package loads (it must come before kafkajs), so only read here
  'linear-grouping': () => linearGroupingInstalled,
  'native-crc32c': useNativeCrc32c,
  'exact-records': useExactRecords,
  'exact-produce-requests': useExactProduceRequests,
};

/** Installs every replacement that is not yet (before the client's first request) and says which kafkajs runs. */
export function installKafkajsReplacements(installers: Readonly<Record<KafkajsReplacement, () => boolean>> = KAFKAJS_REPLACEMENT_INSTALLERS): KafkajsReplacementStatus {
  return Object.fromEntries(KAFKAJS_REPLACEMENTS.map((name) => [name, installers[name]()])) as KafkajsReplacementStatus;
}

/** The replacements kafkajs does not run, in the list's order. */
export function replacementsNotInUse(status: KafkajsReplacementStatus): KafkajsReplacement[] {
  return KAFKAJS_REPLACEMENTS.filter((name) => !status[name]);
}

const warned = new Set<KafkajsReplacement>();

/** A warning for each replacement that did not take, once per process (every client would repeat it). */
export function logKafkajsReplacements(status: KafkajsReplacementStatus, logger: Pick<Logger, 'warn'>): void {
  for (const name of replacementsNotInUse(status)) {
    if (warned.has(name)) continue;
    warned.add(name);
    logger.warn({ msg: 'kafkajs_replacement_not_in_use', replacement: name, detail: "kafkajs runs its own module (loaded before @chainpipe/kafka, or moved by an upgrade): the same bytes, slower" });
  }
}

/**
 * The replacements as a part of an app: `chainpipe_kafkajs_replacement_in_use` (1 or 0 per
 * replacement) in its registry, and a health of `degraded` naming those not in use, which takes
 * the app out of readiness (`/readyz` 503, the component `kafkajs-replacements` false) until a
 * deployment that runs them: a roll-out of a build that runs kafkajs' slower code stops there.
 */
export function kafkajsReplacementsComponent(status: KafkajsReplacementStatus, registry: Registry): Component {
  if (!registry.getSingleMetric('chainpipe_kafkajs_replacement_in_use')) {
    const gauge = new Gauge({ name: 'chainpipe_kafkajs_replacement_in_use', help: '1 while kafkajs runs the replacement of one of its modules, 0 when it runs its own (slower)', labelNames: ['replacement'], registers: [registry] });
    for (const name of KAFKAJS_REPLACEMENTS) gauge.set({ replacement: name }, status[name] ? 1 : 0);
  }
  const missing = replacementsNotInUse(status);
  const report: HealthReport = missing.length ? { state: 'degraded', detail: `kafkajs runs its own ${missing.join(', ')}` } : { state: 'ok' };
  return { name: 'kafkajs-replacements', health: () => report };
}
