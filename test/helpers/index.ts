export { startService, removeDir, freePort, nodeScript, type Running } from '../../bin/spawn.ts';
export { client, newAccount, type HttpResult } from './http.ts';
export { socketFate, WsClient, type Frame } from './ws.ts';
export { integration, type ChatUserSession } from './fixture.ts';
export { requireService, testKeyspace, type ServiceAddress, type ServiceName } from './services.ts';
export { fetchHeaders, fileGone, finalizeUpload, onEachObjectStore, putUpload, serviceFiles } from './uploads.ts';
