// The ceiling: a bare Bun.serve answering the same JSON a probe would, on the
// same machine, measured by the same harness as arena.
const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: '127.0.0.1',
  reusePort: false,
  fetch: () => Response.json({ status: 'ok' }),
})
console.log(JSON.stringify({ msg: 'listening', port: server.port }))
process.on('SIGTERM', () => {
  void server.stop().then(() => process.exit(0))
})
