/** Bad input tried, short mode: hostile queries at GET /messages/search (test/evidence/fuzz/search.ts); `FUZZ_SEED=<n> bun run fuzz search-query` for other seeds. */
import { searchItems } from "../evidence/fuzz/search.ts";
import { fuzzTests } from "../helpers/fuzz.ts";

fuzzTests(searchItems);
