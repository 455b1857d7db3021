/** Bad input tried (issue evidence, item 3), short mode: every route of the service through app.handle, and the bearer corpus (test/evidence/fuzz/api.ts). */
import { apiItems } from "../evidence/fuzz/api.ts";
import { fuzzTests } from "../helpers/fuzz.ts";

fuzzTests(apiItems);
