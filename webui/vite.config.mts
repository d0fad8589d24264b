// The app lives under /det/ on the master; `make build` passes --outDir (build/webui).
// `vite` (dev) and `vite preview` forward /api to $DET_MASTER for working on the UI alone.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const master = process.env.DET_MASTER ?? 'http://127.0.0.1:8080';

export default defineConfig({
  base: '/det/',
  plugins: [react()],
  build: { outDir: '../build/webui', emptyOutDir: true, chunkSizeWarningLimit: 1000 },
  server: { proxy: { '/api': master } },
  preview: { proxy: { '/api': master } },
});
