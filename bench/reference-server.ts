// The ceiling: a bare Bun.serve answering JSON on the same machine, measured
// by the same harness as arena. GET / answers a small object; POST / parses
// the JSON body and answers it back.
const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: '127.0.0.1',
  reusePort: false,
  async fetch(request) {
    if (request.method === 'POST') return Response.json({ received: await request.json() })
    return Response.json({ status: 'ok' })
  },
})
console.log(JSON.stringify({ msg: 'listening', port: server.port }))
process.on('SIGTERM', () => {
  void server.stop().then(() => process.exit(0))
})
