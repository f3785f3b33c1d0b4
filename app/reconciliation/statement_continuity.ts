import { formatThb } from '#core/money'
import { formatGatewayDateTime } from '#core/clock'
import { StatementFormatError, type ParsedStatementLine } from '#reconciliation/statement_line'

type Balanced = ParsedStatementLine & { balanceAfter: number }

/** What a line does to the account's balance: + for a credit, − for a debit. */
function signed(line: ParsedStatementLine) {
  return line.direction === 'credit' ? line.amount : -line.amount
}

/**
 * The running balances a statement prints must follow each other: each
 * line's balance is the one before it plus or minus the line's amount
 * (docs/reconciliation.md, "Statements are continuous"). A line missing or
 * changed in the file breaks the chain, and the file is refused, naming the
 * line. Banks write their lines oldest first or newest first: the first pair
 * says which, and every other pair must agree. A statement without balances
 * is not checked; one with balances on some lines only is refused.
 */
export class BalanceChain {
  #previous: Balanced | undefined
  #first: Balanced | undefined
  #order: 'oldest first' | 'newest first' | undefined
  #withoutBalance: ParsedStatementLine | undefined

  add(line: ParsedStatementLine) {
    if (line.balanceAfter === null || line.balanceAfter === undefined) {
      this.#withoutBalance ??= line
      if (this.#first) throw this.#partial(line)
      return
    }
    if (this.#withoutBalance) throw this.#partial(this.#withoutBalance)
    const current = line as Balanced
    const previous = this.#previous
    if (previous) {
      const forward = previous.balanceAfter + signed(current) === current.balanceAfter
      const backward = current.balanceAfter + signed(previous) === previous.balanceAfter
      this.#order ??= forward ? 'oldest first' : backward ? 'newest first' : undefined
      const follows = this.#order === 'newest first' ? backward : forward
      if (!follows) throw this.#broken(previous, current)
    }
    this.#first ??= current
    this.#previous = current
  }

  /**
   * The file's earliest line and the balance the account had before it (its
   * opening balance), or undefined when the file prints no balance.
   */
  opening(): { line: Balanced; balance: number } | undefined {
    const earliest = this.#order === 'newest first' ? this.#previous : this.#first
    return earliest && { line: earliest, balance: earliest.balanceAfter - signed(earliest) }
  }

  #broken(previous: Balanced, current: Balanced) {
    const [before, after] =
      this.#order === 'newest first' ? [current, previous] : [previous, current]
    const expected = before.balanceAfter + signed(after)
    return new StatementFormatError(
      `line ${after.lineNumber}: the bank's balance ${formatThb(after.balanceAfter)} THB does not follow ` +
        `line ${before.lineNumber} (${formatThb(before.balanceAfter)} THB ${after.direction === 'credit' ? '+' : '−'} ` +
        `${formatThb(after.amount)} = ${formatThb(expected)} THB): a line is missing or was changed`
    )
  }

  #partial(line: ParsedStatementLine) {
    return new StatementFormatError(
      `line ${line.lineNumber}: no balance, where the file's other lines have one`
    )
  }
}

/**
 * The file's opening balance must be where the account's statements left
 * off: the balance after the latest line already stored before the file's
 * earliest line. Otherwise a statement between them is missing, or the file
 * is another account's, and it is refused with both balances.
 */
export function assertContinues(
  opening: { line: Balanced; balance: number },
  last: { balanceAfter: number; lineAt: Date } | undefined
) {
  if (!last || last.balanceAfter === opening.balance) return
  throw new StatementFormatError(
    `line ${opening.line.lineNumber}: the file opens at ${formatThb(opening.balance)} THB, where this ` +
      `account's statements closed at ${formatThb(last.balanceAfter)} THB ` +
      `on ${formatGatewayDateTime(last.lineAt)}: a statement between them is missing, ` +
      "or the file is another account's"
  )
}
