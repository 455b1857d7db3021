// Viewer bundles imported as files (`with { type: "file" }`): the path of the file, embedded in the binary.
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const path: string;
  export default path;
}
declare module "swagger-ui-dist/swagger-ui.css" {
  const path: string;
  export default path;
}
declare module "redoc/bundles/redoc.standalone.js" {
  const path: string;
  export default path;
}
