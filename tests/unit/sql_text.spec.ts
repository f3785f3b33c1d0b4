import { test } from '@japa/runner'
import mysql from 'mysql2'
import { statement } from '#core/sql_batch'
import { hasPlaceholders, statementText } from '#core/sql_text'

/** What mysql2 itself writes for the statement (its client-side format). */
function asMysql2Writes(sql: string, bindings: unknown[]) {
  return mysql.format(sql, bindings as never, false, 'Z')
}

test.group('Statement batch text', () => {
  test('writes each statement as mysql2 would, with its values in it: {name}')
    .with([
      {
        name: 'numbers, strings, NULL and booleans',
        sql: 'INSERT INTO t (a, b, c, d, e) VALUES (?, ?, ?, ?, ?)',
        bindings: [12_345, 'Somchai Jaidee', null, true, 9_007_199_254_740_991n],
      },
      {
        name: 'strings that need escaping',
        sql: 'SELECT ? AS a, ? AS b, ? AS c',
        bindings: ["O'Brien; DROP TABLE t; --", 'back\\slash\n\u0000nul', 'สมชาย ใจดี'],
      },
      {
        name: 'dates in UTC, buffers, lists',
        sql: 'SELECT ? AS a, ? AS b, ? IN (?) AS c',
        bindings: [new Date('2026-12-07T16:56:40.894Z'), Buffer.from([0, 1, 255]), 3, [1, 2, 3]],
      },
      {
        name: 'a ? in quotes, names and comments is not a placeholder',
        sql: 'SELECT \'?\' AS `a?`, ? AS b /* ? */ -- ?\n, ? AS c, "?" AS d',
        bindings: [1, 'x'],
      },
      {
        name: 'an identifier placeholder (??)',
        sql: 'SELECT ?? FROM t WHERE id = ?',
        bindings: ['name', 7],
      },
      {
        name: 'a plain object, which mysql2 writes as assignments',
        sql: 'UPDATE t SET ? WHERE id = ?',
        bindings: [{ a: 1, b: 'x' }, 7],
      },
      {
        name: 'fewer values than placeholders',
        sql: 'SELECT ? AS a, ? AS b',
        bindings: [1],
      },
      { name: 'no values', sql: 'SELECT 1 AS a', bindings: [] },
    ])
    .run(({ assert }, { sql, bindings }) => {
      const expected = asMysql2Writes(sql, bindings)
      // Twice: the first cuts the text, the second uses the cut.
      assert.equal(statementText(statement(sql, bindings), 'Z'), expected)
      assert.equal(statementText(statement(sql, bindings), 'Z'), expected)
    })

  test('the same text with other values gets those values', ({ assert }) => {
    const sql = 'INSERT INTO t (a, b) VALUES (?, ?)'
    assert.equal(
      statementText(statement(sql, [1, 'x']), 'Z'),
      "INSERT INTO t (a, b) VALUES (1, 'x')"
    )
    assert.equal(
      statementText(statement(sql, ["y'", null]), 'Z'),
      "INSERT INTO t (a, b) VALUES ('y\\'', NULL)"
    )
  })

  test('each statement of a batch gets its own values', ({ assert }) => {
    const statements = [
      statement('START TRANSACTION'),
      statement('INSERT INTO t (a) VALUES (?)', [1]),
      statement('UPDATE t SET b = ? WHERE a = ?', ['x', 1]),
      statement('COMMIT'),
    ]
    assert.deepEqual(
      statements.map((each) => statementText(each, 'Z')),
      [
        'START TRANSACTION',
        'INSERT INTO t (a) VALUES (1)',
        "UPDATE t SET b = 'x' WHERE a = 1",
        'COMMIT',
      ]
    )
  })

  test('a text has exactly as many placeholders as values, or not', ({ assert }) => {
    assert.isTrue(hasPlaceholders('SELECT ? AS a, ? AS b', 2))
    assert.isFalse(hasPlaceholders('SELECT ? AS a, ? AS b', 1))
    assert.isFalse(hasPlaceholders('SELECT ? AS a', 2))
    assert.isTrue(hasPlaceholders("SELECT '?' AS a, ? AS b", 1))
  })
})
