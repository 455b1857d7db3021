// Viewer bundles imported as text (`with { type: "text" }`) and embedded in the binary.
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const text: string;
  export default text;
}
declare module "swagger-ui-dist/swagger-ui.css" {
  const text: string;
  export default text;
}
declare module "redoc/bundles/redoc.standalone.js" {
  const text: string;
  export default text;
}
