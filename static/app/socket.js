// A websocket that reconnects with backoff and, once back, resumes the watched generation from the
// last event id it saw, so a dropped connection loses and repeats nothing.
export class Socket {
  constructor(url, { onEvent, onStatus }) {
    this.url = url;
    this.onEvent = onEvent;
    this.onStatus = onStatus;
    this.lastIds = new Map(); // generation → last event id handled
    this.queue = []; // messages typed while disconnected
    this.retryMs = 500;
    this.watching = () => null;
  }

  open() {
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.addEventListener("open", () => {
      this.retryMs = 500;
      const generation = this.watching();
      if (generation) {
        ws.send(JSON.stringify({ type: "resume", generation, after: this.lastIds.get(generation) ?? 0 }));
      }
      for (const message of this.queue.splice(0)) ws.send(JSON.stringify(message));
    });
    ws.addEventListener("message", (msg) => {
      let event;
      try {
        event = JSON.parse(msg.data);
      } catch {
        return;
      }
      const last = event.generation ? this.lastIds.get(event.generation) ?? 0 : 0;
      if (event.generation && event.id && event.id <= last) return; // already handled before a reconnect
      this.onEvent(event);
    });
    ws.addEventListener("close", () => {
      this.onStatus("Connection lost; reconnecting…");
      setTimeout(() => this.open(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 8000);
    });
  }

  seen(generation, id) {
    this.lastIds.set(generation, id);
  }

  send(message) {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
    else this.queue.push(message);
  }
}
