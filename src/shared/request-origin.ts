// The origin a browser or a device reached this server at, for links the
// server hands out to be opened elsewhere (the device-code page's URL): the
// request's scheme and host, or behind a trusted proxy (ARENA_TRUST_PROXY)
// the right-most X-Forwarded-Proto and X-Forwarded-Host, the entries our
// proxy wrote.

const HOST = /^[A-Za-z0-9.-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/

export function requestOrigin(request: Request, trustProxy: boolean): string {
  const url = new URL(request.url)
  const lastOf = (name: string) => (trustProxy ? request.headers.get(name)?.split(',').at(-1)?.trim().toLowerCase() : undefined)
  const proto = lastOf('x-forwarded-proto')
  const scheme = proto === 'https' || proto === 'http' ? proto : url.protocol.slice(0, -1)
  // A host that is not a plain host name (a header someone wrote) falls back to the URL's own.
  const candidates = [lastOf('x-forwarded-host'), request.headers.get('host'), url.host]
  const host = candidates.find((value): value is string => typeof value === 'string' && HOST.test(value)) ?? url.host
  return `${scheme}://${host}`
}
