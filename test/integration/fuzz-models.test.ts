/** Bad input tried (issue evidence, item 3), short mode: the rate limiter and the idempotency store against simple models (test/evidence/fuzz/models.ts). */
import { modelItems } from "../evidence/fuzz/models.ts";
import { fuzzTests } from "../helpers/fuzz.ts";

fuzzTests(modelItems);
