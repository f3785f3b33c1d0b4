import type { importStatement } from '#reconciliation/actions/import_statement'
import { formatThb } from '#core/money'

type ImportSummary = Awaited<ReturnType<typeof importStatement>>

/**
 * What the operator is told after uploading a statement file: how its
 * lines were matched, or that a second operator must confirm it first.
 */
export function importNotice(
  fileName: string,
  summary: ImportSummary
): { tone: 'success' | 'warning'; message: string } {
  if (summary.confirmation) {
    return {
      tone: 'warning',
      message: `${fileName}: ${summary.lines} lines, ${summary.newLines} new. It would move ${formatThb(summary.confirmation.amount ?? 0)} THB, above a platform's four-eyes threshold: nothing is matched until a second operator confirms it (approval request #${summary.confirmation.id}).`,
    }
  }
  const { matched, late, unmatched } = summary.results
  return {
    tone: 'success',
    message: `${fileName}: ${summary.lines} lines, ${summary.newLines} new: ${matched} matched, ${late} late, ${unmatched} unmatched.`,
  }
}
