// The device's side of the device-code flow (contract §13, RFC 8628:
// ./device-codes.ts). The player's side is the /device page (src/device-page/).
import { Elysia } from 'elysia'
import { errors, JSON_BODY, optionalBody, STORAGE } from '../../plugins/openapi'
import { EmptyBody } from '../../shared/models'
import { requestOrigin } from '../../shared/request-origin'
import { answerSignIn, DEVICE_DESCRIPTION, signInFrom, type ClientAddressOptions } from './index'
import type { DeviceCodes } from './device-codes'
import { DeviceCodeResponse, DeviceTokenBody, TokenResponse } from './model'

/** Where the player approves a device: served by this binary (src/device-page/). */
export const DEVICE_PAGE_PATH = '/device'

export interface DeviceCodeRouteOptions extends ClientAddressOptions {
  /** ARENA_SERVER_URL: arena's own base URL as browsers reach it; unset, the origin the device reached (a trusted proxy's when ARENA_TRUST_PROXY). */
  serverUrl?: string | undefined
}

export function deviceCodeModule(deviceCodes: DeviceCodes, options: DeviceCodeRouteOptions) {
  return new Elysia({ name: 'arena/device-code', prefix: '/api/v1' })
    .post(
      '/auth/device-code',
      async ({ request }) => {
        const issued = await deviceCodes.issue()
        const page = `${options.serverUrl ?? requestOrigin(request, options.trustProxy)}${DEVICE_PAGE_PATH}`
        return { ...issued, verificationUri: page, verificationUriComplete: `${page}?code=${issued.userCode}` }
      },
      {
        ...optionalBody(EmptyBody),
        response: { 200: DeviceCodeResponse, ...errors(JSON_BODY, STORAGE) },
        detail: {
          tags: ['auth'],
          summary: 'A device without a keyboard asks to be signed in (RFC 8628): a code to show the player, and one to poll with',
          description: 'Show `userCode` and `verificationUri` (or a QR code of `verificationUriComplete`), then poll `POST /auth/device-code/token` every `interval` seconds until it answers tokens or a final error. No bearer: the answer is the credential.',
        },
      },
    )
    .post('/auth/device-code/token', async ({ body, request, server, set }) => answerSignIn(set, await deviceCodes.poll(body.deviceCode, signInFrom(request, server, options))), {
      body: DeviceTokenBody,
      response: {
        200: TokenResponse,
        ...errors(JSON_BODY, { 400: ['authorization_pending', 'slow_down', 'expired_token', 'access_denied'], 401: ['invalid_credentials'], 403: ['account_banned'] }, STORAGE),
      },
      detail: {
        tags: ['auth'],
        summary: "The device's poll: tokens once the player approved, else why not (RFC 8628)",
        description:
          '400 `authorization_pending` (poll again after `interval`), 400 `slow_down` (polled sooner than the interval: it grows by 5 s), 400 `expired_token` (past its lifetime, unknown, or its tokens already handed out: start again), 400 `access_denied` (the player denied it), or 200 the login shape, once. ' +
          DEVICE_DESCRIPTION,
      },
    })
}
