import { indexEntities } from '@adonisjs/core'
import { defineConfig } from '@adonisjs/core/app'

export default defineConfig({
  experimental: {},

  /*
  | Package commands. The application's own commands are scanned from ./commands.
  */
  commands: [
    () => import('@adonisjs/core/commands'),
    () => import('@adonisjs/lucid/commands'),
    () => import('@adonisjs/session/commands'),
  ],

  providers: [
    () => import('@adonisjs/core/providers/app_provider'),
    () => import('@adonisjs/core/providers/hash_provider'),
    {
      file: () => import('@adonisjs/core/providers/repl_provider'),
      environment: ['repl', 'test'],
    },
    () => import('@adonisjs/core/providers/vinejs_provider'),
    () => import('@adonisjs/core/providers/edge_provider'),
    // Before the first transaction anywhere: a refused COMMIT throws (knex issue #3370).
    () => import('#providers/knex_commit_provider'),
    () => import('@adonisjs/lucid/database_provider'),
    () => import('#providers/redis_provider'),
    // The gateway's job table (app/jobs), registered with the queue mechanism of app/core/queue.
    () => import('#providers/jobs_provider'),
    () => import('#providers/metrics_provider'),
    () => import('@adonisjs/session/session_provider'),
    () => import('@adonisjs/shield/shield_provider'),
    () => import('@adonisjs/auth/auth_provider'),
    () => import('@adonisjs/bouncer/bouncer_provider'),
    () => import('@adonisjs/limiter/limiter_provider'),
    () => import('@adonisjs/drive/drive_provider'),
    () => import('@adonisjs/mail/mail_provider'),
  ],

  /*
  | Every environment: approvable actions register themselves as they load, and
  | a request must find its action in the web server, the worker, Ace and tests.
  */
  preloads: [
    () => import('#start/routes'),
    () => import('#start/kernel'),
    () => import('#start/approvable_actions'),
    () => import('#start/review_queues'),
  ],

  tests: {
    suites: [
      {
        files: ['tests/unit/**/*.spec.{ts,js}'],
        name: 'unit',
        timeout: 10000,
      },
      {
        files: ['tests/functional/**/*.spec.{ts,js}'],
        name: 'functional',
        timeout: 60000,
      },
      {
        files: ['tests/browser/**/*.spec.{ts,js}'],
        name: 'browser',
        timeout: 60000,
      },
    ],
    forceExit: false,
  },

  // Copied into the production build: templates and the back-office stylesheet.
  metaFiles: [
    { pattern: 'resources/views/**/*.edge', reloadServer: false },
    { pattern: 'resources/admin/**', reloadServer: false },
  ],

  hooks: {
    init: [indexEntities()],
  },
})
