export { startService, removeDir, type Running } from './deployment.ts';
export { client, newAccount, type HttpResult } from './http.ts';
