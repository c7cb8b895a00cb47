export { buildOpenApiDocument, API_DESCRIPTION_VERSION, type OpenApiDocumentOptions } from './document';
export { PROBLEM_GUIDE, type ProblemGuide } from './problem-guide';
export { ROUTES_OUTSIDE_API_DESCRIPTION, type UndescribedRoute } from './coverage';
export { problemExample, type Json, type JsonObject } from './kit';
export { SCOPE_GRANTS } from './components';
