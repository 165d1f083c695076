// Validate-only log ingest server: Fastify 5 parses the body, AJV validates it against engage's own
// LogIngestRequest schema (formats asserted), and the answer is engage's 200 `{accepted}` or a 400.
// Nothing is stored. scripts/bench-logs.sh runs it beside engage as the "Node/Fastify+AJV" figure.
//
//   node server.js PORT SCHEMA_FILE
'use strict';
const fs = require('fs');
const Ajv2020 = require('ajv/dist/2020');
const addFormats = require('ajv-formats');
const fastify = require('fastify')({ logger: false, bodyLimit: 6 * 1024 * 1024 });

const [port, schemaFile] = process.argv.slice(2);
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(fs.readFileSync(schemaFile, 'utf8')));

const ingest = async (request, reply) => {
  if (!validate(request.body)) {
    reply.code(400);
    return { error: 'SCHEMA_VIOLATION', details: validate.errors };
  }
  return { accepted: Array.isArray(request.body) ? request.body.length : 1 };
};
fastify.post('/v1/logs', ingest);
fastify.get('/', async () => 'ok');
fastify.listen({ port: Number(port), host: '127.0.0.1' }).catch((error) => {
  console.error(error);
  process.exit(1);
});
