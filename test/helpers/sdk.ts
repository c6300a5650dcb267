// The SDK pointed at an in-process app: its fetch goes through app.handle, and
// every request is recorded so tests can count what the SDK actually sent.
import { expect } from 'bun:test'
import { ApiError, createClient, type ClientOptions, type FetchLike } from '@arena/sdk'
import type { TestApp } from './app'

export const BASE_URL = 'http://arena.test'

export interface SentRequest {
  method: string
  path: string
  headers: Headers
  body: string | undefined
}

/** What a test may do to one request: answer it, forward it (`forward`), or fail it. */
export type Interceptor = (request: SentRequest, forward: () => Promise<Response>) => Promise<Response>

export function recordingFetch(ctx: TestApp, intercept?: Interceptor): { fetch: FetchLike; sent: SentRequest[] } {
  const sent: SentRequest[] = []
  const fetch: FetchLike = async (input, init) => {
    const url = new URL(input)
    const request: SentRequest = {
      method: init.method ?? 'GET',
      path: url.pathname + url.search,
      headers: new Headers(init.headers),
      body: typeof init.body === 'string' ? init.body : undefined,
    }
    sent.push(request)
    const forward = () => ctx.handle(new Request(input, init))
    return intercept ? intercept(request, forward) : forward()
  }
  return { fetch, sent }
}

export function sdkClient(ctx: TestApp, options: Omit<ClientOptions, 'fetch' | 'baseUrl'> & { intercept?: Interceptor } = {}) {
  const { intercept, ...rest } = options
  const { fetch, sent } = recordingFetch(ctx, intercept)
  const client = createClient({ baseUrl: BASE_URL, fetch, ...rest })
  return { client, sent, count: (method: string, pathPattern: RegExp) => sent.filter((r) => r.method === method && pathPattern.test(r.path)).length }
}

/** The ApiError a call rejects with; fails the test if it resolves or rejects with anything else. */
export async function apiError(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ApiError)
  return error as ApiError
}
