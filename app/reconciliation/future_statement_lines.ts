import reconciliationConfig from '#config/reconciliation'
import { formatGatewayDateTime } from '#core/clock'
import { StatementFormatError, type ParsedStatementLine } from '#reconciliation/statement_line'

/**
 * A statement line the bank cannot have booked yet: one dated more than the
 * clock skew (STATEMENT_CLOCK_SKEW_SECONDS, default 300 s) after the
 * import's own time. Such a line would pay orders at a payment time in the
 * future, so it refuses the whole import as any bad line does (a
 * StatementFormatError naming the file's line): nothing is written.
 */
export function refuseFutureLine(
  line: ParsedStatementLine,
  importedAt: Date,
  skewSeconds = reconciliationConfig.statementClockSkewSeconds
) {
  const latest = importedAt.getTime() + skewSeconds * 1000
  if (line.lineAt.getTime() > latest) {
    throw new StatementFormatError(
      `line ${line.lineNumber}: ${formatGatewayDateTime(line.lineAt)} is in the future ` +
        `(later than the import's time ${formatGatewayDateTime(importedAt)} GMT+7 ` +
        `plus ${skewSeconds} s of clock skew)`
    )
  }
}

/** The lines of a parsed file in batches (`parseStatementBatches`), each batch checked with `refuseFutureLine` before it is passed on. */
export async function* refuseFutureLineBatches(
  batches: AsyncIterable<ParsedStatementLine[]>,
  importedAt: Date
): AsyncGenerator<ParsedStatementLine[]> {
  for await (const lines of batches) {
    for (const line of lines) refuseFutureLine(line, importedAt)
    yield lines
  }
}
