import { ActionError } from '#core/validation'

/** The ActionError a refused action throws; fails when the action succeeds. */
export async function refusal(work: Promise<unknown>): Promise<ActionError> {
  try {
    await work
  } catch (error) {
    if (error instanceof ActionError) return error
    throw error
  }
  throw new Error('the action was expected to refuse, and it succeeded')
}

/** { field: message } of an ActionError; a null field is "general". */
export function byField(error: ActionError): Record<string, string> {
  return Object.fromEntries(error.errors.map(({ field, message }) => [field ?? 'general', message]))
}
