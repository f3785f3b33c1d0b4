import type { BaseCommand } from '@adonisjs/core/ace'

/** The arguments and flags every merchant list command takes (the list's own words in each). */
export interface MerchantListFlags {
  merchantId: string
  add?: string[]
  remove?: string[]
  comment?: string
}

/**
 * Runs a merchant list edit (the IP whitelist, the settlement accounts)
 * from its command: the merchant, the entries to add and to remove and the
 * comment as the action's input, as the command line's actor; `report`
 * prints the result. A refusal prints its messages and exits 1.
 */
export async function runMerchantListEdit<Result>(
  command: BaseCommand & MerchantListFlags,
  edit: (input: Record<string, unknown>, actor: import('#core/actor').Actor) => Promise<Result>,
  report: (result: Result) => void | Promise<void>
) {
  const { runAction } = await import('#core/cli')
  const { cliActor } = await import('#core/actor')
  await runAction(command, async () => {
    const result = await edit(
      {
        merchant_id: command.merchantId,
        add: command.add,
        remove: command.remove,
        comment: command.comment,
      },
      cliActor()
    )
    await report(result)
  })
}
