import { defineConfig } from 'vite';

// The dev server takes its port from the command line (`--port`); nothing here is fixed to a machine.
export default defineConfig({
  server: { host: '127.0.0.1', strictPort: true },
  preview: { host: '127.0.0.1', strictPort: true },
  test: { include: ['test/**/*.test.ts'] },
} as never);
