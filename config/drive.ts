import env from '#start/env'
import app from '@adonisjs/core/services/app'
import { defineConfig, services } from '@adonisjs/drive'
import type { ServiceConfigProvider } from '@adonisjs/drive/types'
import type { S3Driver } from 'flydrive/drivers/s3'

/**
 * Where uploaded files (payment slips) are kept. `fs`, the default, is a
 * directory of this machine (storage/ under the application root); `s3` is
 * any S3-compatible object store, for several web processes on several hosts.
 * Files are private: nothing serves them over HTTP.
 */
const disk = env.get('DRIVE_DISK', 'fs')

const fs = services.fs({
  location: env.get('DRIVE_FS_ROOT') ?? app.makePath('storage'),
  visibility: 'private',
  serveFiles: false,
})

/**
 * Resolving the S3 service loads `@aws-sdk/client-s3`, which is installed on
 * the servers that use it (see the README, "Production"): it is configured
 * only when chosen; otherwise using it says what to set.
 */
const s3: ServiceConfigProvider<() => S3Driver> =
  disk === 's3'
    ? services.s3({
        bucket: env.get('S3_BUCKET') ?? '',
        region: env.get('S3_REGION', 'us-east-1'),
        endpoint: env.get('S3_ENDPOINT'),
        forcePathStyle: env.get('S3_FORCE_PATH_STYLE', false),
        credentials: {
          accessKeyId: env.get('S3_ACCESS_KEY_ID') ?? '',
          secretAccessKey: env.get('S3_SECRET_ACCESS_KEY')?.release() ?? '',
        },
        visibility: 'private',
        supportsACL: env.get('S3_SUPPORTS_ACL', false),
      })
    : {
        type: 'provider',
        resolver: async () => () => {
          throw new Error('The s3 disk is not configured: set DRIVE_DISK=s3 and the S3_* variables')
        },
      }

const driveConfig = defineConfig({
  default: disk,
  services: { fs, s3 },
})

export default driveConfig

declare module '@adonisjs/drive/types' {
  export interface DriveDisks extends InferDriveDisks<typeof driveConfig> {}
}
