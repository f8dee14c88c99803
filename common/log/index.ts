import { pino, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

/**
 * Structured JSON logs. Handlers never pass request bodies or headers to the logger; the redaction
 * list is the second line of defence so a secret that slips into a log object is still masked.
 */
export function createLogger(level: string, name: string): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: [
        'password',
        '*.password',
        'token',
        '*.token',
        'accessToken',
        '*.accessToken',
        'refreshToken',
        '*.refreshToken',
        'authorization',
        '*.authorization',
        'headers',
        '*.headers',
      ],
      censor: '[redacted]',
    },
  });
}
