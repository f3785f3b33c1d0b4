import type { ApplicationService } from '@adonisjs/core/types'
import { RedisConnections } from '#core/redis'

/**
 * Binds one lazily-opened ioredis connection set to the container. Nothing
 * connects during codegen or `node ace list`: the first use opens the socket.
 */
export default class RedisProvider {
  constructor(protected app: ApplicationService) {}

  register() {
    this.app.container.singleton(RedisConnections, () => new RedisConnections())
  }

  async shutdown() {
    // Queues opened by this process (to dispatch jobs) hold Redis sockets too.
    const { closeQueues } = await import('#core/queue/queue_manager')
    await closeQueues()
    if (this.app.container.hasBinding(RedisConnections)) {
      const connections = await this.app.container.make(RedisConnections)
      await connections.closeAll()
    }
  }
}
