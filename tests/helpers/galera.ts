import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { MigrationRunner } from '@adonisjs/lucid/migration'
import type { ConnectionConfig } from '@adonisjs/lucid/types/database'
import dbConfig, { BATCH_CONNECTION, sessionSetup } from '#config/database'
import { startGalera, type GaleraCluster, type GaleraNode } from '../../bin/cluster/galera.js'

/** The gateway's database on the test cluster (the cluster is private to the run). */
export const GALERA_DATABASE = 'gateway'

export interface TestGalera {
  cluster: GaleraCluster
  nodes: GaleraNode[]
  /** Name of a Lucid connection to `node` (strict sessions; wsrep_sync_wait when given). */
  connectionTo(node: GaleraNode, options?: { syncWait?: number }): string
  stop(): Promise<void>
}

/** The gateway's own connection settings, with the server swapped for a cluster node. */
function nodeConfig(name: string, node: GaleraNode, syncWait?: number): ConnectionConfig {
  const base = dbConfig.connections[name] as unknown as {
    connection: Record<string, unknown>
    pool?: Record<string, unknown>
  }
  const batched = name === BATCH_CONNECTION
  return {
    ...base,
    connection: { ...base.connection, port: node.port, database: GALERA_DATABASE },
    pool: {
      ...base.pool,
      afterCreate: sessionSetup(
        syncWait,
        batched ? '; SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED' : ''
      ),
    },
  } as unknown as ConnectionConfig
}

/**
 * A three-node Galera cluster in a temporary directory, with the gateway's
 * schema migrated on it and the gateway's own connections (the default one
 * and the batch pool) moved to node n1 until stop(): the gateway's code runs
 * against the cluster unchanged.
 */
export async function startTestGalera(): Promise<TestGalera> {
  const directory = await mkdtemp(join(tmpdir(), 'gw-galera-'))
  const cluster = await startGalera({ directory })
  const [n1] = cluster.nodes
  await n1.query(`CREATE DATABASE ${GALERA_DATABASE}`)

  const added: string[] = []
  // The gateway's own connections move to n1 without closing the originals:
  // clients built on them at boot (the sign-in limiter's store holds the
  // default connection) must work again once the cluster is gone, so the
  // original entries are put back as they were, not re-created (patch()
  // would close them for good).
  const originals = new Map<string, NonNullable<ReturnType<typeof db.manager.get>>>()
  for (const name of ['mysql', BATCH_CONNECTION]) {
    // Both are registered from config/database.ts when the app boots.
    originals.set(name, db.manager.get(name)!)
    db.manager.connections.set(name, {
      name,
      config: nodeConfig(name, n1),
      state: 'registered',
    } as NonNullable<ReturnType<typeof db.manager.get>>)
  }
  const runner = new MigrationRunner(db, app, { direction: 'up', connectionName: 'mysql' })
  await runner.run()
  if (runner.error) throw runner.error

  return {
    cluster,
    nodes: cluster.nodes,
    connectionTo(node, options = {}) {
      const name = `galera_${node.name}${options.syncWait === undefined ? '' : `_sync${options.syncWait}`}`
      if (!db.manager.has(name)) {
        db.manager.add(name, nodeConfig('mysql', node, options.syncWait))
        added.push(name)
      }
      return name
    },
    async stop() {
      for (const name of added) await db.manager.close(name, true)
      for (const name of ['mysql', BATCH_CONNECTION]) {
        await db.manager.get(name)?.connection?.disconnect()
        db.manager.connections.set(name, originals.get(name)!)
      }
      await cluster.stop()
      await rm(directory, { recursive: true, force: true })
    },
  }
}
