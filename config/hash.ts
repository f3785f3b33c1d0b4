import { defineConfig, drivers } from '@adonisjs/core/hash'

/** Operator passwords: argon2id with the library's defaults (64 MiB, 3 passes). */
const hashConfig = defineConfig({
  default: 'argon',
  list: {
    argon: drivers.argon2({
      version: 0x13,
      variant: 'id',
      iterations: 3,
      memory: 65536,
      parallelism: 4,
      saltSize: 16,
      hashLength: 32,
    }),
  },
})

export default hashConfig

declare module '@adonisjs/core/types' {
  export interface HashersList extends InferHashers<typeof hashConfig> {}
}
