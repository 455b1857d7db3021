// Preloaded by bunfig.toml: integration tests start processes and SQLite files on a 2-core machine.
import { setDefaultTimeout } from "bun:test";

setDefaultTimeout(30_000);
