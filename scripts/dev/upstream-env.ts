import { newMnemonic } from '@chainpipe/custody';
import { developmentSimulatorBase, platformKeyEnv, simulatorUpstreamEnv } from '@chainpipe/testing';

/**
 * Prints the upstream configuration of the development stack for `make up` (.run/dev.env), one
 * NAME=value a line: every upstream pointed at upstream-sim on its development port, and the
 * platform's development keys from DEV_SIGNER_MNEMONIC (the one kept in .run/dev.env), or from a
 * new mnemonic when there is none yet.
 */
const mnemonic = process.env.DEV_SIGNER_MNEMONIC || newMnemonic();
const env = { ...simulatorUpstreamEnv(developmentSimulatorBase()), ...platformKeyEnv(mnemonic) };
for (const [name, value] of Object.entries(env)) console.log(`${name}=${value}`);
