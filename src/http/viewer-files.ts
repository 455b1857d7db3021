/**
 * The API viewers' files (Swagger UI's script and style, ReDoc's script), read as text when a page is made.
 * The compiled binary carries them gzip-compressed, as embedded assets named `viewers/<file>.gz`
 * (scripts/build.ts writes them): 0.8 MB instead of 2.8 MB. Run from source, they are read from
 * node_modules. Either way the text is the package's file, byte for byte.
 */
import { basename } from "node:path";

export const VIEWER_FILES = {
  swaggerJs: "swagger-ui-dist/swagger-ui-bundle.js",
  swaggerCss: "swagger-ui-dist/swagger-ui.css",
  redocJs: "redoc/bundles/redoc.standalone.js",
} as const;

export type ViewerFile = keyof typeof VIEWER_FILES;

/** The folder the build embeds (`--asset <dir>/viewers` keeps the folder's name). */
export const EMBEDDED_FOLDER = "viewers";

/** The embedded asset's file name of a viewer file. */
export const embeddedName = (spec: string) => `${basename(spec)}.gz`;

export async function viewerText(file: ViewerFile): Promise<string> {
  const spec = VIEWER_FILES[file];
  const name = `${EMBEDDED_FOLDER}/${embeddedName(spec)}`;
  const embedded = Bun.embeddedFiles.find((f) => (f as Blob & { name?: string }).name === name);
  if (embedded) return new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await embedded.arrayBuffer())));
  let path: string;
  try {
    path = Bun.resolveSync(spec, import.meta.dir);
  } catch {
    throw new Error(
      `${spec} is neither embedded nor installed: build gw with \`bun run build\` (scripts/build.ts)`,
    );
  }
  return Bun.file(path).text();
}
