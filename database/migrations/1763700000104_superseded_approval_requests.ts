import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * An approval request can end superseded: the same setting was changed
 * directly while it waited (the command line's break-glass switching
 * deposits back on or setting the four-eyes threshold, or an admin lowering
 * the threshold), so running it later would act on a state nobody asked
 * about. It is closed with who superseded it and why, never run.
 */
export default class extends BaseSchema {
  async up() {
    this.defer(async (db) => {
      await db.rawQuery(
        `ALTER TABLE approval_requests
           MODIFY status ENUM('pending','approved','rejected','expired','superseded') NOT NULL`
      )
    })
  }

  async down() {
    this.defer(async (db) => {
      await db.rawQuery(
        `UPDATE approval_requests SET status = 'rejected' WHERE status = 'superseded'`
      )
      await db.rawQuery(
        `ALTER TABLE approval_requests
           MODIFY status ENUM('pending','approved','rejected','expired') NOT NULL`
      )
    })
  }
}
