import type { LookupFunction } from 'node:net';
import WebSocket from 'ws';

/** The gateway adapter's WebSocket connection (the `ws` library underneath). */
export interface WebSocketConnection {
  send(text: string): void;
  close(code?: number): void;
}

export interface WebSocketHandlers {
  onOpen(ws: WebSocketConnection): void;
  onMessage(text: string): void;
  onClose(reason: string): void;
  onError(err: Error): void;
}

/** Messages larger than this end the connection (a gateway is not a file transfer). */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** Connects to a ws:// or wss:// URL; handlers are called for the connection's life, each end reported once. */
export function connectWebSocket(
  url: string,
  headers: Record<string, string>,
  h: WebSocketHandlers,
  signal: AbortSignal,
  /** the outbound guard's lookup: the host's addresses are checked as the connection resolves them */
  lookup?: LookupFunction,
): void {
  let ended = false;
  const end = (fn: () => void) => {
    if (ended) return;
    ended = true;
    fn();
  };
  let ws: WebSocket;
  try {
    ws = new WebSocket(url, { headers, maxPayload: MAX_MESSAGE_BYTES, perMessageDeflate: false, followRedirects: false, lookup });
  } catch (err) {
    end(() => h.onError(err as Error));
    return;
  }
  ws.on('unexpected-response', (_req, res) => {
    res.resume();
    end(() => h.onError(new Error(`websocket upgrade refused: HTTP ${res.statusCode}`)));
    ws.terminate();
  });
  ws.on('error', (err) => end(() => h.onError(err)));
  ws.on('open', () =>
    h.onOpen({
      send: (text) => ws.send(text),
      close: (code = 1000) => ws.close(code),
    }),
  );
  ws.on('message', (data, isBinary) => {
    if (!ended) h.onMessage(isBinary ? Buffer.from(data as Buffer).toString('utf8') : String(data));
  });
  ws.on('close', (code) => end(() => h.onClose(code === 1006 ? 'connection closed' : `closed by the gateway (${code})`)));
  signal.addEventListener('abort', () => ws.terminate(), { once: true });
}
