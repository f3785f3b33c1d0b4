/**
 * Runs a transaction body again when MySQL/MariaDB aborts it as a deadlock
 * victim (1213) or on a lock wait timeout (1205): both roll the transaction
 * back whole, so a retry is safe. Other errors pass through.
 */
export async function withDeadlockRetry<T>(operation: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation()
    } catch (error) {
      const errno = (error as { errno?: number }).errno
      if ((errno !== 1213 && errno !== 1205) || attempt >= attempts) throw error
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt))
    }
  }
}

export function isDuplicateKey(error: unknown): boolean {
  return (error as { errno?: number }).errno === 1062
}
