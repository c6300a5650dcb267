// Every table, one file per domain; drizzle-kit reads this to generate migrations.
export * from './auth'
export * from './events'
export * from './games'
export * from './mail'
export * from './security'
export * from './wallet'
export * from './operators'
export * from './identities'
