/**
 * The tool results of `get_attachment` (pure). Like every gw tool, the first content item is the
 * pretty-printed JSON of the answer (also `structuredContent` and `data`): `{attachment_id, mime,
 * size_bytes}`, plus `path` when the bytes are a file instead of image content, `converted_from` when a
 * HEIC/HEIF photo is shown as JPEG, and `note` when the agent should know why it got a file.
 */
import { type ToolResult, toToolResult } from "./api-client.ts";

/** Larger images come back as a file path (MCP clients and models reject bigger image blocks). */
export const IMAGE_MAX_BYTES = 5 * 1024 * 1024;

export interface AttachmentInfo {
  [key: string]: unknown;
  attachment_id: string;
  /** Of the bytes returned: the image content, or the file at `path`. */
  mime: string;
  size_bytes: number;
  path?: string;
  converted_from?: string;
  note?: string;
}

const text = (info: AttachmentInfo) => ({ type: "text" as const, text: JSON.stringify(info, null, 2) });

/** The image as MCP image content, after the JSON text item. */
export function imageResult(info: AttachmentInfo, base64: string): ToolResult {
  return {
    content: [text(info), { type: "image", data: base64, mimeType: info.mime }],
    structuredContent: info,
    data: info,
  };
}

/** The JSON text item alone: `info` carries the path of the local copy. */
export function fileResult(info: AttachmentInfo): ToolResult {
  return { content: [text(info)], structuredContent: info, data: info };
}

export const tooLargeNote = (mime: string): string =>
  `This ${mime} image is larger than ${IMAGE_MAX_BYTES / 1024 / 1024} MB, so it is not shown as an image: the file is at path.`;

export const heifNote = (mime: string, reason: string): string =>
  `${mime === "image/heic" ? "HEIC" : "HEIF"} could not be shown as an image because it could not be converted to JPEG (${reason}). The original file is at path.`;

/** An error envelope made here (the cache could not be used), shaped as the service's. */
export function localError(message: string, details: Record<string, unknown>): ToolResult {
  return toToolResult({
    ok: false,
    status: 0,
    body: { error: { code: "INTERNAL_ERROR", message, details } },
  });
}
