// Files imported `with { type: 'file' }` resolve to a path: on disk in
// development, inside the executable's embedded file system when compiled.
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const path: string
  export default path
}
declare module 'swagger-ui-dist/swagger-ui.css' {
  const path: string
  export default path
}
