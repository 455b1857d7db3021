/**
 * /openapi.json, /docs and /redoc, all behind the bearer (spec G). The heavy renderer (docs-render.ts:
 * the OpenAPI generator and the two viewer bundles) is imported on the first request, not at start-up.
 */
import { type AnyElysia, Elysia } from "elysia";

/** Registers /openapi.json, /docs and /redoc; `root` is the finished app whose routes are documented. */
export function docsRoutes(root: () => AnyElysia, version: string) {
  let cached: Record<string, unknown> | null = null;
  const load = () => import("./docs-render.ts");
  const doc = async () => {
    cached ??= (await load()).buildOpenApiDocument(root(), version);
    return cached;
  };
  const hidden = { detail: { hide: true } };
  return new Elysia({ name: "docs" })
    .get("/openapi.json", () => doc(), hidden)
    .get("/docs", async () => (await load()).swaggerPage(await doc()), hidden)
    .get("/redoc", async () => (await load()).redocPage(await doc()), hidden);
}
