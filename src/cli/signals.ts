/**
 * Forwarding termination signals sent to `specter` itself to the session it runs, so that stopping
 * Specter (ctrl-c, `kill`, a closed terminal) never leaves the program running behind it.
 *
 * @module
 */
import type { Session } from "../session/mod.ts";

const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * Until the session exits: the first SIGINT/SIGTERM/SIGHUP terminates it gracefully (its grace period),
 * a second one kills it at once. Returns a function that removes the listeners.
 */
export function terminateOnSignals(session: Session): () => void {
  let received = 0;
  const onSignal = () => {
    received++;
    void session.terminate(received === 1 ? undefined : 0);
  };
  for (const signal of FORWARDED) Deno.addSignalListener(signal, onSignal);
  const remove = () => {
    for (const signal of FORWARDED) Deno.removeSignalListener(signal, onSignal);
  };
  void session.exited.then(remove);
  return remove;
}
