import { formatErrors, type Contracts } from '@chainpipe/contracts';
import type { NormalizedTx } from '@chainpipe/tx-parsers';
import type { TxCheck } from './plan';

/** The normalized-tx contract (schemas/common/normalized-tx.json) as a TxCheck. */
export function normalizedTxCheck(contracts: Contracts): TxCheck {
  const validate = contracts.validator('common/normalized-tx');
  return (tx: NormalizedTx) => (validate(tx) ? null : formatErrors(validate.errors));
}
