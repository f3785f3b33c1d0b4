import { defineConfig, stores } from '@adonisjs/session'
import adminConfig from '#config/admin'

/**
 * Back-office sessions, kept in the database (so that logging out, or out
 * everywhere, ends them for good) and carried by a cookie that only /admin
 * receives: Secure, HttpOnly, SameSite=Strict. `age` is the idle timeout: each
 * request pushes the expiry back.
 */
const sessionConfig = defineConfig({
  enabled: true,
  cookieName: 'gateway-admin-session',
  clearWithBrowser: true,
  age: `${adminConfig.idleTimeoutMinutes} minutes`,
  cookie: {
    path: '/admin',
    httpOnly: true,
    secure: true,
    sameSite: 'strict',
  },
  store: 'database',
  stores: {
    database: stores.database({ tableName: 'sessions' }),
  },
})

export default sessionConfig
