export { createMetrics, type ServiceMetrics } from './metrics.ts';
export { opsRoutes, type OpsOptions } from './routes.ts';
