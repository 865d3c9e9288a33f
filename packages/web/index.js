// Resolves the directory holding the built inbox assets; the relay serves it at `/`.
import { fileURLToPath } from 'node:url';
export const webRoot = fileURLToPath(new URL('./dist/', import.meta.url));
