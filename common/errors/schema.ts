import Type from 'typebox';
import { errorCodes } from './codes.ts';

/** The problem body as a schema, so OpenAPI documents the one error shape of every route. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.Union(Object.keys(errorCodes).map((c) => Type.Literal(c))),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  },
  { $id: 'Problem', description: 'application/problem+json (RFC 9457) with a stable `code`' },
);
