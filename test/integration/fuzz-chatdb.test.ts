/**
 * Bad input tried (issue 15), short mode: malformed attributedBody blobs through the typedstream decoder
 * and malformed chat.db rows through the real iMessage reader never crash it, never stop it and never
 * lose the good row written after them (test/evidence/fuzz/chatdb.ts).
 */
import { chatDbItems } from "../evidence/fuzz/chatdb.ts";
import { fuzzTests } from "../helpers/fuzz.ts";

fuzzTests(chatDbItems);
