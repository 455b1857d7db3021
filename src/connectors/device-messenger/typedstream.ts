/**
 * `message.attributedBody` (typedstream) codec; pure, no I/O (chatdb.md §4). `decodeAttributedBody` gives the
 * text only (null = "no text", never throws); `decodeBody` the same text with its attribute runs (message
 * part, file transfer GUID, audio transcription); `encodeAttributedBody`/`encodeBody` write what Messages
 * writes, and decoding an encoded body gives it back exactly. The parts live in the typedstream-*.ts files.
 */
export { type Body, type BodyRun, decodeBody } from "./typedstream-body.ts";
export { decodeAttributedBody } from "./typedstream-text.ts";
export { type BodyPiece, composeBody, encodeAttributedBody, encodeBody } from "./typedstream-writer.ts";
