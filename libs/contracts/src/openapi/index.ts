export { buildOpenApiDocument, type OpenApiDocumentOptions } from './document';
export { PROBLEM_GUIDE } from './problem-guide';
export { ROUTES_OUTSIDE_API_DESCRIPTION } from './coverage';
export { problemExample, type JsonObject } from './kit';
