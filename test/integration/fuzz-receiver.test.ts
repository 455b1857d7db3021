/** Bad input tried (issue evidence, item 3), short mode: the receiver's /webhook: hostile requests, signature and timestamp tampering, known answers (test/evidence/fuzz/receiver.ts). */
import { receiverItems } from "../evidence/fuzz/receiver.ts";
import { fuzzTests } from "../helpers/fuzz.ts";

fuzzTests(receiverItems);
