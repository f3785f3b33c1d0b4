import env from '#start/env'
import { defineConfig, drivers } from '@adonisjs/core/hash'

/**
 * Operator passwords: argon2id with the library's defaults (64 MiB, 3 passes).
 * The test suite enrols dozens of operators and proves what a hash is for
 * (argon2id, verified, never stored in clear), not its cost: it hashes at
 * argon2's smallest cost (1 MiB, 2 passes), which every hash still records in
 * its own parameters, so a production hash verifies the same way.
 */
const testing = env.get('NODE_ENV') === 'test'
const hashConfig = defineConfig({
  default: 'argon',
  list: {
    argon: drivers.argon2({
      version: 0x13,
      variant: 'id',
      iterations: testing ? 2 : 3,
      memory: testing ? 1024 : 65536,
      parallelism: testing ? 1 : 4,
      saltSize: 16,
      hashLength: 32,
    }),
  },
})

export default hashConfig

declare module '@adonisjs/core/types' {
  export interface HashersList extends InferHashers<typeof hashConfig> {}
}
