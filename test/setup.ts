// Preloaded by bunfig.toml: integration tests start processes and SQLite files on a 2-core machine.
// Hooks here apply to the whole run: the afterAll below runs once, after the last test file.
import { afterAll, setDefaultTimeout } from "bun:test";
import { removeTempDirs } from "./helpers/temp.ts";

setDefaultTimeout(30_000);
afterAll(removeTempDirs);
