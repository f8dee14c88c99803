export { ConfigSchema, type Config } from './schema.ts';
export { loadConfig, publicUrl, ConfigError } from './load.ts';
