import { configApp } from '@adonisjs/eslint-config'

export default configApp(
  { ignores: ['build/**', 'tmp/**', '.adonisjs/**'] },
  {
    rules: {
      // `(await query()).field` reads fine and is common in tests.
      '@unicorn/no-await-expression-member': 'off',
    },
  }
)
