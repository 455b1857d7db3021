/** Bad input tried (issue evidence, item 3), short mode: real HTTP and raw malformed HTTP against a running gw serve (test/evidence/fuzz/http.ts). */
import { httpItems } from "../evidence/fuzz/http.ts";
import { fuzzTests } from "../helpers/fuzz.ts";

fuzzTests(httpItems);
