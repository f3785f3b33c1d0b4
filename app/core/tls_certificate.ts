import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { X509Certificate } from 'node:crypto'
import selfsigned from 'selfsigned'

export interface CertificatePair {
  cert: string
  key: string
}

/**
 * Returns the development certificate kept in `directory`, generating it on
 * first use. It covers localhost, 127.0.0.1 and ::1 and is valid for a year;
 * clients use `curl -k` or trust tmp/tls/cert.pem.
 */
export async function ensureDevelopmentCertificate(directory: URL): Promise<CertificatePair> {
  const dir = fileURLToPath(directory)
  const certFile = join(dir, 'cert.pem')
  const keyFile = join(dir, 'key.pem')
  const existing = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]).catch(
    () => undefined
  )
  // Reuse the stored pair unless it expires within a week.
  if (
    existing &&
    new Date(new X509Certificate(existing[0]).validTo).getTime() > Date.now() + 7 * 86400_000
  ) {
    return { cert: existing[0], key: existing[1] }
  }
  const pair = await generateSelfSignedCertificate()
  await mkdir(dir, { recursive: true })
  await writeFile(keyFile, pair.key, { mode: 0o600 })
  await writeFile(certFile, pair.cert)
  return pair
}

export async function generateSelfSignedCertificate(): Promise<CertificatePair> {
  const notAfter = new Date(Date.now() + 365 * 24 * 3600 * 1000)
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: notAfter,
    extensions: [
      { name: 'basicConstraints', cA: false },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  })
  return { cert: pems.cert, key: pems.private }
}
