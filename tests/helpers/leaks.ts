/** Signs of a stack trace or a source path in an answer: none may ever reach a client. */
export const STACK_OR_PATH = [/at .*\(.*:\d+:\d+\)/, /node_modules|\/app\/|\.ts:\d+|file:\/\//]

/** Signs of SQL or a MySQL error in an answer (whole words: `order_id` is no `ER_`). */
export const SQL = /\bSQL\b|\bER_[A-Z_]+|sqlMessage|sqlState|\bSELECT\s|\bINSERT\s/i
