/**
 * GET /attachments/{attachment_id} (spec G): streams the stored bytes with the stored MIME and size,
 * `Content-Disposition: inline`, and headers that keep a stranger's HTML or SVG from running on the
 * API's origin (`nosniff`, `Content-Security-Policy: sandbox`).
 */

import { existsSync } from "node:fs";
import { join } from "node:path";
import { Elysia } from "elysia";
import { AppError } from "../../core/errors.ts";
import type { AttachmentStore } from "../../store/attachments.ts";
import { AttachmentIdParams, errorResponses } from "../schemas.ts";

export function attachmentRoutes(deps: { attachments: AttachmentStore; dir: string }) {
  return new Elysia({ name: "attachments" }).get(
    "/attachments/:attachment_id",
    ({ params }) => {
      const row = deps.attachments.get(params.attachment_id);
      const file = row?.file_name ? join(deps.dir, row.file_name) : null;
      if (!row || !file || !existsSync(file)) {
        throw new AppError("MESSAGE_NOT_FOUND", "No stored bytes for this attachment.", {
          attachment_id: params.attachment_id,
        });
      }
      return new Response(Bun.file(file), {
        headers: {
          "content-type": row.mime,
          "content-length": String(row.size_bytes),
          "content-disposition": "inline",
          "x-content-type-options": "nosniff",
          "content-security-policy": "sandbox",
        },
      });
    },
    {
      params: AttachmentIdParams,
      response: errorResponses(401, 404, 422),
      detail: { summary: "Attachment bytes", description: "404 once retention deleted the bytes." },
    },
  );
}
