// A websocket that reconnects with backoff (and jitter, so a server's restart is not met by every
// browser at once) and, once back, resumes the watched generation from the last event id it saw, so a
// dropped connection loses and repeats nothing. A resume the server cannot answer yet (`unavailable`:
// Redis is away) is tried again with the same backoff instead of ending the live view. Each connection
// also says which thread the page shows (`watch`), so a teacher's hiding or showing one of its pages
// reaches a reloaded page too.
// The server answers a longer message `message_too_big` unread, and Daphne drops the connection on one over
// 1 MiB (the browser sees only 1006): such a message is refused here, and never sent.
const MESSAGE_MAX_CHARS = 64 * 1024;

export class Socket {
  constructor(url, { onEvent, onStatus }) {
    this.url = url;
    this.onEvent = onEvent;
    this.onStatus = onStatus;
    this.lastIds = new Map(); // generation → last event id handled
    this.queue = []; // messages typed while disconnected
    this.retryMs = 500;
    this.watching = () => null; // the generation being written, if any
    this.thread = () => null; // the thread the page shows, if any
  }

  open() {
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.addEventListener("open", () => {
      this.retryMs = 500;
      const thread = this.thread();
      if (thread) ws.send(JSON.stringify({ type: "watch", thread }));
      this.resume();
      for (const message of this.queue.splice(0)) ws.send(JSON.stringify(message));
    });
    ws.addEventListener("message", (msg) => {
      let event;
      try {
        event = JSON.parse(msg.data);
      } catch {
        return;
      }
      if (event.type === "error" && event.code === "unavailable" && event.request === "resume") {
        this.onStatus("recovering");
        setTimeout(() => this.resume(), this.nextDelay());
        return;
      }
      const last = event.generation ? this.lastIds.get(event.generation) ?? 0 : 0;
      if (event.generation && event.id && event.id <= last) return; // already handled before a reconnect
      this.onEvent(event);
    });
    ws.addEventListener("close", () => {
      this.onStatus("reconnecting");
      setTimeout(() => this.open(), this.nextDelay());
    });
  }

  // The next wait: doubling from 0.5 s to 8 s, each somewhere between half and all of it.
  nextDelay() {
    const delay = this.retryMs * (0.5 + Math.random() / 2);
    this.retryMs = Math.min(this.retryMs * 2, 8000);
    return delay;
  }

  resume() {
    const generation = this.watching();
    if (generation && this.ws?.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify({ type: "resume", generation, after: this.lastIds.get(generation) ?? 0 }));
    }
  }

  seen(generation, id) {
    this.lastIds.set(generation, id);
  }

  send(message) {
    if (JSON.stringify(message).length > MESSAGE_MAX_CHARS) {
      this.onEvent({ type: "error", id: 0, generation: null, code: "message_too_big", request: message.type,
        message: `That message is over ${MESSAGE_MAX_CHARS} characters, too long to send.` });
      return;
    }
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
    else this.queue.push(message);
  }
}
