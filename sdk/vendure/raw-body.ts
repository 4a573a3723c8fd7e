// Keeps the exact bytes of a webhook delivery: the signature covers them, and a JSON parser would lose them.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A request whose body this middleware read. */
export interface RequestWithRawBody extends IncomingMessage {
  rawBody?: Buffer;
}

/** The largest delivery accepted (events are a few KB). */
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Express middleware (mounted before Nest's body parser, on the webhook route only) that reads the body
 * into `req.rawBody`; the parser then finds the request consumed and leaves it alone.
 */
export function checkoutRawBody(req: RequestWithRawBody, res: ServerResponse, next: (err?: unknown) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      res.statusCode = 413;
      res.end();
      req.destroy();
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (res.writableEnded) return;
    req.rawBody = Buffer.concat(chunks);
    next();
  });
  req.on('error', (err) => next(err));
}
