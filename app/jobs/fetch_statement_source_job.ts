import type { Job } from 'bullmq'
import { fetchStatements } from '#reconciliation/fetch/fetch_statements'

/** statements.fetch-source — one source now, due or not ("Fetch now"); busy while another fetch of it runs. */
export default async function fetchStatementSourceJob(job: Job<{ sourceId: number }>) {
  const result = await fetchStatements(Number(job.data.sourceId), { force: true })
  return { ...result, files: result.files.length }
}
