import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/store/schema.pg.ts',
  out: './drizzle/pg',
})
