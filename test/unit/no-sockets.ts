/**
 * Root hook of the unit stage: unit tests are pure, so none may listen on or connect to a socket.
 * A test that needs one (a server on loopback, a client of one) is named `*.loopback.test.ts` and
 * runs in the standalone stage instead; one that opens a socket here fails at that line.
 */
import net from 'node:net';

const refuse = (what: string) =>
  function (this: unknown): never {
    throw new Error(`a unit test ${what}: name its file *.loopback.test.ts (the standalone stage runs it), or keep it free of I/O`);
  };

net.Server.prototype.listen = refuse('listened on a socket') as typeof net.Server.prototype.listen;
net.Socket.prototype.connect = refuse('connected a socket') as typeof net.Socket.prototype.connect;
