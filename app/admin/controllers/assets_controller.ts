import type { HttpContext } from '@adonisjs/core/http'
import { readFile } from 'node:fs/promises'
import app from '@adonisjs/core/services/app'

let stylesheet: Promise<Buffer> | undefined

/** The back-office stylesheet, read once and cached by browsers for an hour. */
export default class AssetsController {
  async stylesheet({ response }: HttpContext) {
    stylesheet ??= readFile(app.makePath('resources/admin/admin.css'))
    response.header('Content-Type', 'text/css; charset=utf-8')
    response.header('Cache-Control', 'public, max-age=3600')
    return response.send(await stylesheet)
  }
}
