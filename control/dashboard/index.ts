/** The dashboard web page: its browser sources (page/), their bundling, and its serving at `/`. */
export { serveDashboard, CONTENT_SECURITY_POLICY, type DashboardOptions } from './serve.ts';
