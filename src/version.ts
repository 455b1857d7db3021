/** The binary's version: package.json's, embedded at build time. */
import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;
