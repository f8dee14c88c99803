export { defineRoute, type AnyRoute, type Authenticator, type AuthSpec, type HttpMethod, type Reply, type RequestContext, type RequestInfo } from './route.ts';
export { attachRoutes, problemReply, type HttpOptions, type AttachedRoutes } from './server.ts';
export { Router } from './router.ts';
export { listen, closeApp, type Listening } from './listen.ts';
export { readBody, type BodyResult } from './body.ts';
export { allowOrigin, parseOrigins, type CorsPolicy } from './cors.ts';
export { buildOpenApi, type OpenApiInfo } from './openapi.ts';
export { compileValidator, type Validator } from './validate.ts';
export { DisplayText, EmailAddress, isDisplayText, isEmailAddress } from './text-formats.ts';
