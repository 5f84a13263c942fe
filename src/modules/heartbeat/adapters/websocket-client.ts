import { createHash, randomBytes } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import type { Duplex } from 'node:stream';

/**
 * A minimal RFC 6455 WebSocket client (text messages, ping/pong, close, fragmentation): Node 20
 * has no WebSocket client built in, and one adapter does not justify a dependency.
 */

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
export const OP = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;

export const acceptKey = (key: string) => createHash('sha1').update(key + GUID).digest('base64');

/** One frame; clients mask, servers do not. */
export function encodeFrame(opcode: number, payload: Buffer, mask: boolean): Buffer {
  const len = payload.length;
  const head: number[] = [0x80 | opcode];
  const m = mask ? 0x80 : 0;
  if (len < 126) head.push(m | len);
  else if (len < 65536) head.push(m | 126, len >> 8, len & 0xff);
  else {
    head.push(m | 127, 0, 0, 0, 0);
    head.push((len / 2 ** 24) & 0xff, (len >> 16) & 0xff, (len >> 8) & 0xff, len & 0xff);
  }
  if (!mask) return Buffer.concat([Buffer.from(head), payload]);
  const key = randomBytes(4);
  const body = Buffer.alloc(len);
  for (let i = 0; i < len; i++) body[i] = payload[i] ^ key[i & 3];
  return Buffer.concat([Buffer.from(head), key, body]);
}

/** Incremental frame parser; emits whole frames (unmasking when masked). */
export class FrameParser {
  private buf = Buffer.alloc(0);

  constructor(private readonly onFrame: (fin: boolean, opcode: number, payload: Buffer) => void, private readonly maxBytes = 16 * 1024 * 1024) {}

  push(chunk: Buffer): void {
    this.buf = Buffer.concat([this.buf, chunk]);
    for (;;) {
      if (this.buf.length < 2) return;
      const fin = (this.buf[0] & 0x80) !== 0;
      const opcode = this.buf[0] & 0x0f;
      const masked = (this.buf[1] & 0x80) !== 0;
      let len = this.buf[1] & 0x7f;
      let off = 2;
      if (len === 126) {
        if (this.buf.length < 4) return;
        len = this.buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) return;
        len = this.buf.readUInt32BE(2) * 2 ** 32 + this.buf.readUInt32BE(6);
        off = 10;
      }
      if (len > this.maxBytes) throw new Error(`websocket frame of ${len} bytes exceeds the limit`);
      const keyLen = masked ? 4 : 0;
      if (this.buf.length < off + keyLen + len) return;
      let payload = this.buf.subarray(off + keyLen, off + keyLen + len);
      if (masked) {
        const key = this.buf.subarray(off, off + 4);
        payload = Buffer.from(payload.map((b, i) => b ^ key[i & 3]));
      }
      this.buf = this.buf.subarray(off + keyLen + len);
      this.onFrame(fin, opcode, Buffer.from(payload));
    }
  }
}

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

/** Connects to a ws:// or wss:// URL; handlers are called for the connection's life. */
export function connectWebSocket(url: string, headers: Record<string, string>, h: WebSocketHandlers, signal: AbortSignal): void {
  const u = new URL(url);
  const secure = u.protocol === 'wss:';
  const key = randomBytes(16).toString('base64');
  const req = (secure ? https : http).request({
    protocol: secure ? 'https:' : 'http:',
    hostname: u.hostname,
    port: u.port || (secure ? 443 : 80),
    path: u.pathname + u.search,
    headers: { ...headers, Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Key': key, 'Sec-WebSocket-Version': '13' },
    signal,
  });
  let closed = false;
  const closeOnce = (reason: string) => {
    if (closed) return;
    closed = true;
    h.onClose(reason);
  };
  req.on('error', (err) => {
    if (!closed) h.onError(err);
    closed = true;
  });
  req.on('response', (res) => {
    h.onError(new Error(`websocket upgrade refused: HTTP ${res.statusCode}`));
    closed = true;
    res.resume();
  });
  req.on('upgrade', (res, socket: Duplex, head: Buffer) => {
    if (res.headers['sec-websocket-accept'] !== acceptKey(key)) {
      socket.destroy();
      h.onError(new Error('websocket handshake failed: bad Sec-WebSocket-Accept'));
      closed = true;
      return;
    }
    const ws: WebSocketConnection = {
      send: (text) => socket.write(encodeFrame(OP.text, Buffer.from(text, 'utf8'), true)),
      close: (code = 1000) => {
        const b = Buffer.alloc(2);
        b.writeUInt16BE(code);
        socket.write(encodeFrame(OP.close, b, true));
        socket.end();
      },
    };
    let fragments: Buffer[] = [];
    const parser = new FrameParser((fin, opcode, payload) => {
      if (opcode === OP.ping) socket.write(encodeFrame(OP.pong, payload, true));
      else if (opcode === OP.close) {
        socket.end();
        closeOnce(`closed by the gateway${payload.length >= 2 ? ` (${payload.readUInt16BE(0)})` : ''}`);
      } else if (opcode === OP.text || opcode === OP.binary || opcode === OP.continuation) {
        fragments.push(payload);
        if (fin) {
          const text = Buffer.concat(fragments).toString('utf8');
          fragments = [];
          h.onMessage(text);
        }
      }
    });
    socket.on('data', (d: Buffer) => {
      try {
        parser.push(d);
      } catch (err) {
        socket.destroy();
        h.onError(err as Error);
      }
    });
    socket.on('close', () => closeOnce('connection closed'));
    socket.on('error', (err) => {
      if (!closed) h.onError(err);
      closed = true;
    });
    signal.addEventListener('abort', () => socket.destroy(), { once: true });
    h.onOpen(ws);
    if (head.length) parser.push(head);
  });
  req.end();
}
