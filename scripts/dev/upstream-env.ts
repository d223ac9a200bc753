import { DEVELOPMENT_SIMULATOR_BASE, simulatorUpstreamEnv } from '@chainpipe/testing';

/**
 * Prints the upstream configuration of the development stack for `make up` (.run/dev.env), one
 * NAME=value a line: every upstream pointed at upstream-sim on its development port.
 */
for (const [name, value] of Object.entries(simulatorUpstreamEnv(DEVELOPMENT_SIMULATOR_BASE))) console.log(`${name}=${value}`);
