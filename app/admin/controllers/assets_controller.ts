import type { HttpContext } from '@adonisjs/core/http'
import { readFile } from 'node:fs/promises'
import app from '@adonisjs/core/services/app'

let stylesheet: Promise<Buffer> | undefined

/**
 * The back-office's scripts, by the name its pages use: the chart library
 * from node_modules (versioned in its URL, so cached for a year) and the
 * dashboard's own small script. No other file is ever served.
 */
const SCRIPTS: Record<string, { path: string; cacheControl: string }> = {
  'chart.umd.min.js': {
    path: 'node_modules/chart.js/dist/chart.umd.min.js',
    cacheControl: 'public, max-age=31536000, immutable',
  },
  'dashboard.js': { path: 'resources/admin/dashboard.js', cacheControl: 'public, max-age=3600' },
}
const scripts = new Map<string, Promise<Buffer>>()

/** The back-office stylesheet and scripts, read once and cached by browsers. */
export default class AssetsController {
  async stylesheet({ response }: HttpContext) {
    stylesheet ??= readFile(app.makePath('resources/admin/admin.css'))
    response.header('Content-Type', 'text/css; charset=utf-8')
    response.header('Cache-Control', 'public, max-age=3600')
    return response.send(await stylesheet)
  }

  async script({ params, response }: HttpContext) {
    const script = Object.hasOwn(SCRIPTS, params.file) ? SCRIPTS[params.file] : undefined
    if (!script) return response.notFound('Not found')
    let content = scripts.get(params.file)
    if (!content) {
      content = readFile(app.makePath(script.path))
      content.catch(() => scripts.delete(params.file))
      scripts.set(params.file, content)
    }
    response.header('Content-Type', 'text/javascript; charset=utf-8')
    response.header('Cache-Control', script.cacheControl)
    return response.send(await content)
  }
}
