// The interactive reference of /api/schema. No validator badge (it would call validator.swagger.io)
// and the key stays in this tab only: persistAuthorization is off.
window.ui = SwaggerUIBundle({
  url: "/api/schema",
  dom_id: "#swagger-ui",
  deepLinking: true,
  displayOperationId: true,
  displayRequestDuration: true,
  docExpansion: "list",
  defaultModelsExpandDepth: 0,
  filter: true,
  tryItOutEnabled: false,
  validatorUrl: null,
  persistAuthorization: false,
});
