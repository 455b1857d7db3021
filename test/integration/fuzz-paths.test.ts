/** Bad input tried (issue evidence, item 3), short mode: hostile attachment paths and files swapped after their check (test/evidence/fuzz/paths.ts). */
import { pathItems } from "../evidence/fuzz/paths.ts";
import { fuzzTests } from "../helpers/fuzz.ts";

fuzzTests(pathItems);
