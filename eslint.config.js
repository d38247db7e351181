// Lint configuration: typescript-eslint's recommended rules over src, test and bench.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.kapi/**', '.out/**', '.cache/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // Tests read servers' JSON answers as users' scripts do, loosely; the product (src, bench) declares no `any`
  // but KObject's (src/api/object.ts).
  { files: ['test/**'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
