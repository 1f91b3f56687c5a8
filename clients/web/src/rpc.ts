/// <reference lib="dom" />
/**
 * The web viewer's JSON-RPC connection to the daemon over `/v1/ws`, with the token offered as a
 * subprotocol beside `specter.v1`. A message may carry several NDJSON lines; answers settle their calls,
 * notifications go to `onNotification`.
 *
 * @module
 */
import { WS_PATH, WS_SUBPROTOCOL, WS_TOKEN_PREFIX } from "../../../src/protocol/mod.ts";
import { warn } from "./page.ts";

/** A JSON-RPC connection to the daemon over the WebSocket. */
export class Rpc {
  #socket: WebSocket;
  #next = 1;
  #pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  onNotification: (method: string, params: unknown) => void = () => {};
  onClose: (event: CloseEvent) => void = () => {};
  readonly opened: Promise<void>;

  constructor(token: string) {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    this.#socket = new WebSocket(`${scheme}//${location.host}${WS_PATH}`, [
      WS_SUBPROTOCOL,
      WS_TOKEN_PREFIX + token,
    ]);
    this.opened = new Promise((resolve, reject) => {
      this.#socket.onopen = () => resolve();
      this.#socket.onerror = () => reject(new Error("the connection was refused"));
    });
    this.#socket.onmessage = (event) => {
      if (typeof event.data !== "string") {
        warn("A binary message was dropped (this page does not ask for compression)");
        return;
      }
      for (const line of event.data.split("\n")) if (line !== "") this.#line(line);
    };
    this.#socket.onclose = (event) => {
      for (const { reject } of this.#pending.values()) reject(new Error("the connection closed"));
      this.#pending.clear();
      this.onClose(event);
    };
  }

  call(method: string, params: unknown): Promise<unknown> {
    const id = this.#next++;
    this.#socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject }));
  }

  notify(method: string, params: unknown): void {
    if (this.#socket.readyState === WebSocket.OPEN) {
      this.#socket.send(JSON.stringify({ jsonrpc: "2.0", method, params }));
    }
  }

  close(): void {
    this.#socket.close();
  }

  #line(line: string): void {
    let message: {
      id?: number;
      result?: unknown;
      error?: { message?: string };
      method?: string;
      params?: unknown;
    };
    try {
      message = JSON.parse(line);
    } catch {
      warn("A message that is not JSON was dropped");
      return;
    }
    if (typeof message.id === "number" && this.#pending.has(message.id)) {
      const waiter = this.#pending.get(message.id)!;
      this.#pending.delete(message.id);
      if (message.error !== undefined) waiter.reject(new Error(message.error.message ?? "refused"));
      else waiter.resolve(message.result);
      return;
    }
    if (typeof message.method === "string") this.onNotification(message.method, message.params);
  }
}
