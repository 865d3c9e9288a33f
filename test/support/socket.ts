// Raw-socket helpers for tests that must control exactly when a client writes and reads (the
// oversize-body tests of the relay and the adapter: a client that writes its whole body before
// reading anything must still get its 413).
import type { Socket } from 'node:net';

/** Writes `data`; resolves once the socket takes more (drained) or has closed. */
export async function writeDrained(socket: Socket, data: string | Buffer): Promise<void> {
  if (socket.write(data)) return;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.on('drain', done);
    socket.on('close', done);
  });
}
