/**
 * The keeper: the small process that spawns the daemon's sessions, holds their terminals and outlives the
 * daemon. Its own folder, so that `specter keeper` loads nothing else (no terminal model, no policy).
 *
 * @module
 */
export {
  HOLD_CAP,
  keeperPaths,
  MAX_KEEPER_MESSAGE,
  MAX_SPAWN_FDS,
  runKeeper,
  type RunKeeperOptions,
} from "./keeper.ts";
export { KEEPER_IDLE_ENV, KEEPER_IDLE_GRACE_MS } from "./orphan_watch.ts";
export { decodeKeeperRequest } from "./messages.ts";
