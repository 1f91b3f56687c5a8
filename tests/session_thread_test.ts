/**
 * The whole session suite again, with every session read on the reader thread (`readerThread: true`):
 * the CLI reads that way, and so does every `screen: true` session.
 */
import { useReaderThread } from "./_helpers.ts";
import "./session_test.ts";

useReaderThread();
