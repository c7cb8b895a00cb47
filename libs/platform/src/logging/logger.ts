import type { LoggerService } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import pino, { type DestinationStream, type Logger } from 'pino';
import { activeSpanIds } from '../tracing/tracing';

/** Carries the request id through every await of one request or message. */
export const requestContext = new AsyncLocalStorage<{ readonly requestId: string }>();

/** Secrets: redacted as a field of the line and as a field of any object on it (`body.password`). */
const SECRET_FIELDS = [
  'authorization',
  'cookie',
  'password',
  'client_secret',
  'access_token',
  'refresh_token',
  'token',
  'code_verifier',
  'secret',
];

/** Never written to a log line, wherever they appear. */
const REDACTED_PATHS = [
  // A failed query's bound values (e-mails, digests, whole reconcile lists): the SQL is enough.
  'err.parameters',
  'err.cause.parameters',
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => `*.${field}`),
  // An authorization code, but not `*.code`: an error's code (`err.code`) is worth logging.
  'code',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
];

/**
 * pino's `time` field (as stdTimeFunctions.isoTime writes it), formatted once per millisecond:
 * a Date and its ISO string per line cost ~2–3 µs in a profile of the HTTP stack.
 */
export function isoTimeOncePerMs(): () => string {
  let ms = Number.NaN;
  let field = '';
  return () => {
    const now = Date.now();
    if (now !== ms) {
      ms = now;
      field = `,"time":"${new Date(now).toISOString()}"`;
    }
    return field;
  };
}

export function createLogger(app: string, level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { app },
      messageKey: 'msg',
      timestamp: isoTimeOncePerMs(),
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      // The request id rides on every line logged while a request or message is being handled,
      // and the trace's ids while a span is active, so a line leads to its trace and back.
      mixin() {
        const requestId = requestContext.getStore()?.requestId;
        const ids = activeSpanIds();
        if (!ids) return requestId ? { request_id: requestId } : {};
        return requestId ? { request_id: requestId, ...ids } : ids;
      },
    },
    destination,
  );
}

/** Lets Nest's own messages (module init, route mapping, errors) go through the same JSON logger. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string) {
    this.write('info', message, context);
  }
  error(message: unknown, traceOrContext?: string, context?: string) {
    const trace = context ? traceOrContext : undefined;
    this.write('error', message, context ?? traceOrContext, trace);
  }
  warn(message: unknown, context?: string) {
    this.write('warn', message, context);
  }
  debug(message: unknown, context?: string) {
    this.write('debug', message, context);
  }
  verbose(message: unknown, context?: string) {
    this.write('trace', message, context);
  }
  fatal(message: unknown, context?: string) {
    this.write('fatal', message, context);
  }

  private write(level: pino.Level, message: unknown, context?: string, stack?: string) {
    if (message instanceof Error) {
      this.logger[level]({ context, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.logger[level]({ context, ...message });
    } else {
      this.logger[level]({ context, ...(stack ? { stack } : {}) }, String(message));
    }
  }
}
