import { loadContracts, type Contracts, type TopicSpec } from '@chainpipe/contracts';

let contracts: Contracts | undefined;

/**
 * A message a test builds for `spec`'s topic, checked against the topic's schema before the test
 * uses it: a hand-built message that the real producer would refuse fails where it is built,
 * instead of testing a consumer with input it can never get. Returns the value unchanged.
 */
export function topicMessage<T>(spec: TopicSpec<T>, value: T): T {
  if (spec.encoding !== 'json') throw new Error(`${spec.name} is not a json topic`);
  // Loaded on first use only: the schemas compile in tens of milliseconds, once per test process.
  contracts ??= loadContracts();
  const check = contracts.validate(spec.schema, value);
  if (!check.ok) throw new Error(`test message off the ${spec.name} schema: ${check.errors}`);
  return value;
}
