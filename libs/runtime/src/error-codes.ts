/**
 * Every error code of the pipeline, in one list: the `code` a RetryableError or
 * NonRetryableError carries, and the `dlq-error-code` header of a dead letter, which is what an
 * operator reads when a `<topic>.dlq` grows. A new code is added here first (the type refuses
 * any other); the error code table of docs/architecture.md is checked against this list.
 */
export const ERROR_CODES = {
  RETRYABLE: 'a failure that may pass on a retry, without a more specific code',
  NON_RETRYABLE: 'an input that will never succeed, without a more specific code',
  JSON_INVALID: 'a consumed value that is not JSON',
  SCHEMA_INVALID: "a consumed value or its headers off the topic's schema",
  DECODE_FAILED: 'a consumed record that could not be decoded for another reason',
  HANDLER_REJECTED: 'a record its handler refused for good (isolated from its batch)',
  PRODUCE_BAD_VALUE: 'a message of the wrong kind for its topic (a raw topic takes bytes)',
  PRODUCE_SCHEMA_INVALID: "a message refused before sending: off its topic's schema",
  PRODUCE_TOO_LARGE: "a message refused before sending: alone above its topic's maxMessageBytes",
  PRODUCE_NOT_OWNER: "a publish refused: the app is not among the topic's producers in the registry",
  PRODUCE_TIMEOUT: 'a publish not acknowledged by the broker within the publish timeout',
  PRODUCE_FAILED: 'a publish the broker refused or could not be reached for',
  STORE_FAILED: 'Postgres failed while storing (retried)',
  STORE_REJECTED: 'Postgres refused the data itself (dead-lettered)',
  UNKNOWN_NETWORK: 'a raw delivery naming no supported network',
  UNPARSABLE: 'a raw delivery whose body cannot be read as its dataset',
  NO_BLOCKS: 'a raw delivery in which no block could be read',
  PARTIAL_PARSE: 'a raw delivery stored in part: its unreadable items are kept for a replay',
  UPSTREAM_UNREACHABLE: 'a price source that did not answer in time or refused the connection',
  UPSTREAM_HTTP: 'a price source that answered with an HTTP error',
  UPSTREAM_NOT_JSON: 'a price source whose answer is not JSON',
  UPSTREAM_UNREADABLE: 'a price source whose JSON is not what its API documents',
  UNKNOWN: 'a dead letter whose cause gave no code',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;
