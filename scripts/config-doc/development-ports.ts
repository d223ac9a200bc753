/**
 * Imported first by the configuration reference: the apps' port and broker defaults are read from
 * the port table moved by CHAINPIPE_PORT_OFFSET when their config modules load, and the reference
 * documents the development ports, whatever offset the shell that generates or checks it has.
 */
process.env.CHAINPIPE_PORT_OFFSET = '0';
