import type { BaseCommand } from '@adonisjs/core/ace'
import { ActionError } from '#core/validation'

/**
 * Runs an operator action from an Ace command: an ActionError (invalid input
 * or a refused guard) prints each message, as the back-office shows them
 * beside their fields, and the command exits 1. Other errors propagate.
 */
export async function runAction(command: BaseCommand, work: () => Promise<void>) {
  try {
    await work()
  } catch (error) {
    if (!(error instanceof ActionError)) throw error
    for (const { message } of error.errors) command.logger.error(message)
    command.exitCode = 1
  }
}
