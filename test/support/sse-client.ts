/**
 * A Server-Sent Events client over Node's http (test support; Node 20 has no EventSource). The
 * body is parsed as the WHATWG HTML standard's "event stream interpretation" says
 * (html.spec.whatwg.org, section 9.2.6): lines end in CRLF, LF or CR; a line starting with ':' is a
 * comment; `field: value` (one leading space removed) for `data` (joined with LF), `event`, `id`
 * (ignored when it contains NUL) and `retry` (ASCII digits only); an empty line dispatches the event
 * when its data buffer is not empty. A UTF-8 BOM at the start is skipped. Reconnection is the
 * caller's (it sees `close` and decides), so a test counts reconnects itself.
 */
import * as http from 'node:http';

export interface SseEvent {
  readonly type: string;
  readonly data: string;
  readonly lastEventId: string;
}

export interface SseParser {
  /** Feeds decoded text; returns the events it completed. */
  push(text: string): SseEvent[];
  /** The last `retry` the stream set (ms), if any. */
  retry(): number | undefined;
}

export function sseParser(): SseParser {
  let buffer = '';
  let first = true;
  let data = '';
  let type = '';
  let lastEventId = '';
  let retry: number | undefined;
  let pendingCr = false;
  const line = (l: string, out: SseEvent[]) => {
    if (l === '') {
      if (data !== '') out.push({ type: type || 'message', data: data.endsWith('\n') ? data.slice(0, -1) : data, lastEventId });
      data = '';
      type = '';
      return;
    }
    if (l.startsWith(':')) return;
    const colon = l.indexOf(':');
    const field = colon < 0 ? l : l.slice(0, colon);
    let value = colon < 0 ? '' : l.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data += `${value}\n`;
    else if (field === 'event') type = value;
    else if (field === 'id') {
      if (!value.includes('\0')) lastEventId = value;
    } else if (field === 'retry' && /^[0-9]+$/.test(value)) retry = Number(value);
  };
  return {
    push(text) {
      if (first && text.length > 0) {
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
        first = false;
      }
      // A CR at the end of the previous chunk and an LF at the start of this one are one line end.
      if (pendingCr && text.startsWith('\n')) text = text.slice(1);
      pendingCr = false;
      buffer += text;
      const out: SseEvent[] = [];
      const re = /\r\n|\r|\n/g;
      let start = 0;
      for (let m = re.exec(buffer); m; m = re.exec(buffer)) {
        if (m[0] === '\r' && m.index === buffer.length - 1) {
          pendingCr = true;
        }
        line(buffer.slice(start, m.index), out);
        start = m.index + m[0].length;
      }
      buffer = buffer.slice(start);
      return out;
    },
    retry: () => retry,
  };
}

export interface SseConnection {
  readonly request: http.ClientRequest;
  /** Resolves with the response (status and headers) or rejects on a transport error before it. */
  readonly response: Promise<http.IncomingMessage>;
}

/** GET `url` with `Accept: text/event-stream` (and `headers`); each parsed event goes to `onEvent`. */
export function openSse(
  url: string,
  onEvent: (e: SseEvent) => void,
  options: { agent?: http.Agent; lastEventId?: string; headers?: Record<string, string> } = {},
): SseConnection {
  const headers: Record<string, string> = { ...options.headers, accept: 'text/event-stream', 'cache-control': 'no-cache' };
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
  const request = http.get(url, { headers, agent: options.agent });
  const response = new Promise<http.IncomingMessage>((resolve, reject) => {
    request.once('error', reject);
    request.once('response', (res) => {
      const parser = sseParser();
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => parser.push(chunk).forEach(onEvent));
      resolve(res);
    });
  });
  response.catch(() => {});
  return { request, response };
}
