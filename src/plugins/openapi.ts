// The OpenAPI document at /openapi/json and a Swagger UI page at /openapi.
// The UI's script and stylesheet are embedded in the binary and served from
// here, so the docs page works on a machine with no internet access.
import { openapi } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
import swaggerBundlePath from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import swaggerCssPath from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import { VERSION } from '../shared/version'

export const DOCS_PATH = '/openapi'
/** Name of the bearer scheme; routes behind the auth guard list it in `detail.security`. */
export const BEARER_SCHEME = 'bearer'
export const BEARER_SECURITY = [{ [BEARER_SCHEME]: [] }]
export const SPEC_PATH = '/openapi/json'
const ASSETS = '/openapi/assets'

function asset(path: string, contentType: string) {
  return () =>
    new Response(Bun.file(path), {
      headers: { 'content-type': contentType, 'cache-control': 'public, max-age=86400' },
    })
}

/** A factory, not a shared instance: the document describes the app it is mounted in. */
export const apiDocs = () =>
  new Elysia({ name: 'arena/openapi' })
    .use(
      openapi({
        path: DOCS_PATH,
        specPath: SPEC_PATH,
        provider: 'swagger-ui',
        swagger: {
          // The plugin points the page at a relative "openapi/json", which breaks
          // when the page is opened as /openapi/. Its typings omit `url`, but the
          // value given here is spread over that default.
          ...({ url: SPEC_PATH } as object),
          cdn: `${ASSETS}/swagger-ui-bundle.js`,
          theme: `${ASSETS}/swagger-ui.css`,
          autoDarkMode: true,
        },
        documentation: {
          info: {
            title: 'arena',
            version: VERSION,
            description:
              'Self-hosted backend for game platforms: player identity, match arbitration, secure purchases. ' +
              'Errors are always { error: { code, message, status } }.',
          },
          components: {
            securitySchemes: {
              [BEARER_SCHEME]: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'access token from login or /auth/validate' },
              adminToken: { type: 'apiKey', in: 'header', name: 'x-admin-token', description: 'ARENA_ADMIN_TOKEN' },
            },
          },
        },
      }),
    )
    .get(`${ASSETS}/swagger-ui-bundle.js`, asset(swaggerBundlePath, 'application/javascript; charset=utf-8'), {
      detail: { hide: true },
    })
    .get(`${ASSETS}/swagger-ui.css`, asset(swaggerCssPath, 'text/css; charset=utf-8'), { detail: { hide: true } })
