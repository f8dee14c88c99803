export { ConfigSchema, type Config } from './schema.ts';
export { loadConfig, loadConfigOrExit, publicUrl, ConfigError } from './load.ts';
